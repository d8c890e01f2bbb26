// The store's Webhooks page (issue 24): the signing key set (kid, created, retired) with rotation
// for owners, the store's recent deliveries across its payments (failures first; each with its
// payment, status, attempts and last answer, from reporting.webhook_outcomes), and a sample
// receiver built on the package's `kassa/webhooks` export (examples/webhook-receiver.ts in full).
import { html } from '../web/html.ts';
import type { WebhookOutcome } from './money.ts';
import { dateTime, shell, type StoreContext, type Viewer } from './pages.ts';
import { can } from './policy.ts';
import { publishedUntil, type WebhookKeyRow } from './webhookKeys.ts';

/** A receiver in a dozen lines: the package's verifier (`kassa/webhooks`) and node:http. */
export function receiverSnippet(keysUrl: string): string {
  return `import http from 'node:http';
import { createWebhookVerifier } from 'kassa/webhooks';

// One verifier per process: it caches the key set and refetches it on a new kid.
const verifier = createWebhookVerifier({ keysUrl: ${JSON.stringify(keysUrl)} });

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

export function webhooksPage(input: {
  root: string;
  viewer: Viewer;
  store: StoreContext;
  keys: readonly WebhookKeyRow[];
  keysUrl: string;
  deliveries: readonly WebhookOutcome[];
  notice?: string | null;
  problem?: string | null;
}): string {
  const { root, store } = input;
  const storeRoot = `${root}/stores/${store.id}`;
  const keyState = (k: WebhookKeyRow) =>
    k.retired_at ? `retired ${dateTime(k.retired_at)}, published until ${dateTime(publishedUntil(k.retired_at))}` : 'active';
  const keys = input.keys.length
    ? html`<div class="table-wrap" tabindex="0"><table id="webhook-keys"><caption class="muted">Published at <a href="${input.keysUrl}">${input.keysUrl}</a></caption>
<thead><tr><th scope="col">kid</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>${input.keys.map((k) => html`<tr><td class="mono">${k.kid}</td><td class="num">${dateTime(k.created_at)}</td><td class="key-state">${keyState(k)}</td></tr>`)}</tbody></table></div>`
    : html`<p id="webhook-keys">No key yet: the first is made when the first webhook is signed or the key set is first read.</p>`;
  const rotate = can(store.role, 'webhook_key.rotate')
    ? html`<form method="post" action="${storeRoot}/webhooks/keys/rotate" data-confirm="Make a new signing key? The current one stays published for 24 hours.">
<p class="muted">Rotating makes a new key sign from now on; the current one stays published for 24 hours, so receivers that refetch the key set on an unknown kid (as kassa/webhooks does) keep verifying. The key set is this Kassa's: it signs the webhooks of every store it serves.</p>
<button type="submit">Rotate the signing key</button>
</form>`
    : html`<p class="muted">Only the store's owners can rotate the key.</p>`;
  const answer = (d: WebhookOutcome) =>
    d.last_http_status !== null ? `HTTP ${d.last_http_status}` : (d.last_error ?? (d.attempts === 0 ? 'not tried yet' : '—'));
  const deliveries = input.deliveries.length
    ? html`<div class="table-wrap" tabindex="0"><table id="webhook-deliveries"><caption class="muted">The most recent ${input.deliveries.length}, failed first, then pending, then delivered</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead>
<tbody>${input.deliveries.map(
        (
          d,
        ) => html`<tr class="delivery-${d.status}"><td><a class="mono" href="${storeRoot}/payments/${d.payment_id}">${d.payment_id}</a>${d.order_id ? html`<br><span class="muted">${d.order_id}</span>` : ''}</td>
<td class="delivery-status">${d.status}</td><td>${d.reason}</td><td class="num">${d.attempts}</td><td class="last-answer">${answer(d)}</td><td class="num">${dateTime(d.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p id="webhook-deliveries">No webhook delivery yet. A payment created with a webhookURL gets one when it completes.</p>`;
  const body = html`<h1>Webhooks</h1>
${input.notice ? html`<p class="success" role="status">${input.notice}</p>` : ''}
${input.problem ? html`<p class="problem" role="alert">${input.problem}</p>` : ''}
<section class="card" aria-labelledby="keys-heading"><h2 id="keys-heading">Signing keys</h2>${keys}${rotate}</section>
<section class="card" aria-labelledby="deliveries-heading"><h2 id="deliveries-heading">Recent deliveries</h2>${deliveries}</section>
<section class="card" aria-labelledby="receiver-heading"><h2 id="receiver-heading">A receiver</h2>
<p>Verify each webhook with the package's kit (<span class="mono">kassa/webhooks</span>: plain JavaScript, Node 20+, no dependencies; or copy its one file, src/webhooks/receiver.ts). The full example is examples/webhook-receiver.ts.</p>
<pre id="receiver-snippet" tabindex="0"><code>${receiverSnippet(input.keysUrl)}</code></pre>
<button type="button" data-copy="receiver-snippet" hidden>Copy the snippet</button> <span id="receiver-snippet-copied" role="status"></span></section>`;
  return shell({ root, title: 'Webhooks', body, viewer: input.viewer, store, current: 'webhooks' });
}
