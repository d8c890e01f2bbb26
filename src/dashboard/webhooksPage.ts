// The store's Webhooks page (issue 24): the signing key set (kid, created, retired) with rotation
// for owners, the store's recent deliveries across its payments (failures first; each with its
// payment, status, attempts and last answer, from reporting.webhook_outcomes), and a sample
// receiver built on the receiver kit, `kassa-webhooks` (examples/webhook-receiver.ts in full).
import { html, raw } from '../web/html.ts';
import { EVENT_TYPES } from '../webhooks/events.ts';
import { eventWords, term } from './words.ts';
import type { WebhookOutcome } from './money.ts';
import { copyableId, dateTime, describedBy, problemFor, shell, type StoreContext, type Viewer } from './pages.ts';
import type { EndpointWithDeliveries } from './webhookEndpoints.ts';
import { can } from './policy.ts';
import { dashboardPaths, type StorePaths } from './paths.ts';
import { publishedUntil, type WebhookKeyRow } from './webhookKeys.ts';

/** A receiver in a dozen lines: the kit's verifier (`kassa-webhooks`) and node:http. */
function receiverSnippet(keysUrl: string, storeId: string): string {
  return `import http from 'node:http';
import { createWebhookVerifier } from 'kassa-webhooks';

// One verifier per process: it caches the key set and refetches it on a new kid.
// storeID: this store's id. Every store of this Kassa is signed with the same keys; the kit rejects
// (403) a webhook for another store, so another store's payment cannot fulfil your orders.
const verifier = createWebhookVerifier({ keysUrl: ${JSON.stringify(keysUrl)}, storeID: ${JSON.stringify(storeId)} });

http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  // The exact bytes: the signature covers them. 200 only once processed; Kassa retries anything else.
  const result = await verifier.handle(Buffer.concat(chunks), req.headers, async (payload) => {
    await markOrderPaid(payload.order_id ?? payload.paymentID); // your code, idempotent
  });
  res.writeHead(result.status).end();
}).listen(8080);
`;
}

/** What the notice of a redirect after an endpoint action says (`?notice=`). */
export const ENDPOINT_NOTICES = {
  endpoint_added: 'Endpoint added. Send it a test event to check that it answers.',
  test_sent: 'Test event queued: a signed ping, sent within seconds. Its delivery is listed below.',
  redelivered: 'Queued again: the same event, signed afresh.',
  endpoint_deleted: 'Endpoint deleted, with its deliveries.',
} as const;
export type EndpointNotice = keyof typeof ENDPOINT_NOTICES;

/** The add form as posted back with its problems (field → sentence). */
export interface EndpointForm {
  url: string;
  events: readonly string[];
  problems: Record<string, string>;
}

/** The store's webhook endpoints: each with its events, latest deliveries and (owners) its actions; the add form. */
function endpointsSection(at: StorePaths, role: StoreContext['role'], endpoints: readonly EndpointWithDeliveries[], form: EndpointForm | undefined) {
  const owner = can(role, 'webhook_endpoints.manage');
  const answer = (d: EndpointWithDeliveries['deliveries'][number]) => {
    const last = d.attempts.at(-1);
    return last === undefined ? 'not tried yet' : last.http_status !== null ? `HTTP ${last.http_status}` : (last.error ?? '—');
  };
  const list = endpoints.length
    ? endpoints.map((e) => {
        const endpoint = at.endpoint(e.id);
        const deliveries = e.deliveries.length
          ? html`<div class="table-wrap" tabindex="0"><table class="endpoint-deliveries"><caption class="muted">The latest ${e.deliveries.length}, newest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th>${owner ? html`<th scope="col">Action</th>` : ''}</tr></thead>
<tbody>${e.deliveries.map(
              (d) =>
                html`<tr class="delivery-${d.status}"><td>${eventWords(d.event)}</td><td class="delivery-status">${d.status}</td><td class="num">${d.attempts.length}</td><td class="last-answer">${answer(d)}</td><td class="num">${dateTime(d.created_at)}</td>${
                  owner
                    ? html`<td><form method="post" action="${endpoint.redeliver(d.id)}"><button type="submit" class="secondary">Redeliver</button></form></td>`
                    : ''
                }</tr>`,
            )}</tbody></table></div>`
          : html`<p class="muted">No delivery yet.</p>`;
        const actions = owner
          ? html`<div class="actions"><form method="post" action="${endpoint.test()}"><button type="submit">Send a test event</button></form>
<form method="post" action="${endpoint.delete()}" data-confirm="Delete this endpoint and its deliveries? Events are no longer sent to it."><button type="submit" class="secondary">Delete</button></form></div>`
          : '';
        return html`<article class="endpoint" id="endpoint-${e.id}" aria-labelledby="endpoint-${e.id}-url"><h3 class="mono" id="endpoint-${e.id}-url">${e.url}</h3>
<p>Hears: <span class="endpoint-events">${e.events.map(eventWords).join('; ')}</span> (and test events).</p>${actions}${
          e.deliveries.length
            ? html`<details class="endpoint-deliveries-fold"><summary>Its latest deliveries (${e.deliveries.length})</summary>${deliveries}</details>`
            : deliveries
        }</article>`;
      })
    : html`<p id="no-endpoints">No endpoint yet. An endpoint hears the events it lists, for every payment of the store.</p>`;
  const problems = form?.problems ?? {};
  const checked = form?.events ?? ['payment.completed'];
  const add = owner
    ? html`<form method="post" action="${at.endpoints()}" id="add-endpoint">
<h3>Add an endpoint</h3>
${problems.form ? html`<p class="problem" role="alert">${problems.form}</p>` : ''}
<label for="endpoint-url">URL (public HTTPS)</label>
<input id="endpoint-url" name="url" type="url" class="mono" spellcheck="false" autocomplete="off" value="${form?.url ?? ''}"${describedBy(problems, 'url')}>
${problemFor(problems, 'url')}
<fieldset${problems.events ? raw(' aria-describedby="events-problem"') : ''}><legend>${term(at.glossary(), 'webhook_events', 'Events')} it hears</legend>
${EVENT_TYPES.map((type) => {
  const id = `event-${type.replace('.', '-')}`;
  return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="events" value="${type}"${checked.includes(type) ? raw(' checked') : ''}> ${eventWords(type)}</label>`;
})}
</fieldset>
${problemFor(problems, 'events')}
<button type="submit">Add endpoint</button>
</form>`
    : html`<p class="muted">Only the store's owners can add, test or delete endpoints.</p>`;
  return html`<section class="card" aria-labelledby="endpoints-heading"><h2 id="endpoints-heading">Endpoints</h2>
<p class="muted">Each endpoint is told the ${term(at.glossary(), 'webhook_events', 'events')} it lists, signed with the keys below and retried for 12 hours. A payment's own webhook address is told only that the payment is complete.</p>
${list}${add}</section>`;
}

export function webhooksPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  keys: readonly WebhookKeyRow[];
  keysUrl: string;
  deliveries: readonly WebhookOutcome[];
  /** Which page of the recent deliveries this is (1: the first DELIVERIES_PER_PAGE), and whether more follow. */
  deliveriesPage?: { number: number; hasMore: boolean };
  endpoints: readonly EndpointWithDeliveries[];
  endpointForm?: EndpointForm;
  notice?: string | null;
  problem?: string | null;
}): string {
  const { root, store } = input;
  const at = dashboardPaths(root).store(store.id);
  const deliveriesPage = input.deliveriesPage ?? { number: 1, hasMore: false };
  const keyState = (k: WebhookKeyRow) =>
    k.retired_at ? `retired ${dateTime(k.retired_at)}, published until ${dateTime(publishedUntil(k.retired_at))}` : 'active';
  const keys = input.keys.length
    ? html`<div class="table-wrap" tabindex="0"><table id="webhook-keys"><caption class="muted">Published at <a href="${input.keysUrl}">${input.keysUrl}</a></caption>
<thead><tr><th scope="col">kid</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>${input.keys.map((k) => html`<tr><td class="mono">${k.kid}</td><td class="num">${dateTime(k.created_at)}</td><td class="key-state">${keyState(k)}</td></tr>`)}</tbody></table></div>`
    : html`<p id="webhook-keys">No key yet: the first is made when the first webhook is signed or the key set is first read.</p>`;
  const rotate = can(store.role, 'webhook_key.rotate')
    ? html`<form method="post" action="${at.rotateKey()}" data-confirm="Make a new signing key? The current one stays published for 24 hours.">
<p class="muted">Rotating makes a new key sign from now on; the current one stays published for 24 hours, so receivers that refetch the key set on an unknown kid (as kassa-webhooks does) keep verifying. The key set is this Kassa's: it signs the webhooks of every store it serves.</p>
<button type="submit">Rotate the signing key</button>
</form>`
    : html`<p class="muted">Only the store's owners can rotate the key.</p>`;
  const answer = (d: WebhookOutcome) =>
    d.last_http_status !== null ? `HTTP ${d.last_http_status}` : (d.last_error ?? (d.attempts === 0 ? 'not tried yet' : '—'));
  const deliveries = input.deliveries.length
    ? html`<div class="table-wrap" tabindex="0"><table id="webhook-deliveries"><caption class="muted">${
        deliveriesPage.number === 1 ? html`The most recent ${input.deliveries.length}` : html`Page ${deliveriesPage.number}`
      }, failed first, then pending, then delivered</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead>
<tbody>${input.deliveries.map(
        (
          d,
        ) => html`<tr class="delivery-${d.status}"><td>${copyableId(d.payment_id, 'payment id', at.payment(d.payment_id))}${d.order_id ? html`<br><span class="muted">${d.order_id}</span>` : ''}</td>
<td class="delivery-status">${d.status}</td><td>${d.reason}</td><td class="num">${d.attempts}</td><td class="last-answer">${answer(d)}</td><td class="num">${dateTime(d.created_at)}</td></tr>`,
      )}</tbody></table></div>${
        deliveriesPage.number > 1 || deliveriesPage.hasMore
          ? html`<nav class="pager" aria-label="Deliveries">${
              deliveriesPage.number > 1
                ? html`<a href="${at.webhooks(deliveriesPage.number === 2 ? undefined : `deliveries=${deliveriesPage.number - 1}`)}#deliveries-heading">Previous deliveries</a> `
                : ''
            }${deliveriesPage.hasMore ? html`<a href="${at.webhooks(`deliveries=${deliveriesPage.number + 1}`)}#deliveries-heading">More deliveries</a>` : ''}</nav>`
          : ''
      }`
    : html`<p id="webhook-deliveries">No webhook delivery yet. A payment created with a webhookURL gets one when it completes.</p>`;
  const body = html`<h1>Webhooks</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${input.problem ? html`<p class="problem" role="alert">${input.problem}</p>` : ''}
${endpointsSection(at, store.role, input.endpoints, input.endpointForm)}
<section class="card" aria-labelledby="keys-heading"><h2 id="keys-heading">Signing keys</h2>${keys}${rotate}</section>
<section class="card" aria-labelledby="deliveries-heading"><h2 id="deliveries-heading">Recent deliveries</h2>${deliveries}</section>
<section class="card" aria-labelledby="receiver-heading"><h2 id="receiver-heading">For your developer</h2>
<details class="developer"><summary>How the shop's server checks a webhook</summary>
<p>Each event's body is <span class="mono">{"type", "eventID", "payload", "signAt"}</span> (docs/API.md, Store webhook endpoints).</p>
<p>Verify each webhook with the receiver kit (<span class="mono">kassa-webhooks</span>, the package in packages/webhooks: plain JavaScript, Node 20+, no dependencies; or copy its one file, src/webhooks/receiver.ts). The full example is examples/webhook-receiver.ts.</p>
<pre id="receiver-snippet" tabindex="0"><code>${receiverSnippet(input.keysUrl, store.id)}</code></pre>
<button type="button" data-copy="receiver-snippet" hidden>Copy the snippet</button> <span id="receiver-snippet-copied" role="status"></span></details></section>`;
  return shell({ root, title: 'Webhooks', body, viewer: input.viewer, store, current: 'webhooks' });
}
