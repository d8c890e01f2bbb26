// Payment links (issue 30 items 1 and 3, issue 47 item 5; docs/API.md, Payment links): the API
// (create, list, get, deactivate, errors with their param), and the customer's side of
// {checkout_base_url}/l/{id} — a visit (GET, HEAD: a person or a link preview) shows the page and makes
// nothing; the page's POST makes a payment at the link's price through the create command, paid on
// the sandbox chain; an open amount's form (a comma decimal read as meant); maxPayments under 20
// requests at once; a link expired (driven clock), used up or deactivated; a reload reusing its payment.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../../src/auth/tokens.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { assertError } from '../helpers/payments.ts';

let app: ChainTestApp;
let token: string;
let readToken: string;

before(async () => {
  app = await startChainApp();
  const store = await app.store({ methods: 'TON/TON' });
  token = store.token;
  // A read_only token: it reads the store's links (the checks below) and cannot make one.
  readToken = (await issueToken(app.pool, store.id, null, new Date(), 'read_only')).token;
  const refused = await app.request('POST', '/v1/payment-links', { token: readToken, body: { currency: 'TON', amount: '1' } });
  assert.deepEqual([refused.status, refused.json.error?.code], [403, 'insufficient_scope'], refused.text);
});
after(() => app.close());

const TON = { methods: [{ coin: 'TON', chain: 'TON' }] };

async function createLink(body: Record<string, unknown>) {
  const created = await app.request('POST', '/v1/payment-links', { token, body });
  assert.equal(created.status, 201, created.text);
  return created.json;
}

/** A customer's visit of the link's page (redirects not followed), with the cookie they hold. */
async function visit(url: string, cookie?: string) {
  const { pathname, search } = new URL(url);
  const response = await fetch(`${app.url}${pathname}${search}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const setCookie = response.headers.get('set-cookie');
  return {
    status: response.status,
    location: response.headers.get('location'),
    cookie: setCookie?.split(';')[0] ?? cookie,
    setCookie,
    text: await response.text(),
  };
}

/** The customer presses the page's button (an open amount: with what they typed): a POST of the form. */
async function ask(url: string, form: Record<string, string> = {}, cookie?: string) {
  const { pathname, search } = new URL(url);
  const response = await fetch(`${app.url}${pathname}${search}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(form).toString(),
  });
  const setCookie = response.headers.get('set-cookie');
  return {
    status: response.status,
    location: response.headers.get('location'),
    cookie: setCookie?.split(';')[0] ?? cookie,
    setCookie,
    text: await response.text(),
  };
}

const linkPayments = async (linkId: string): Promise<Array<{ id: string; status: string; amount: string }>> =>
  (await app.request('GET', `/v1/payments?payment_link=${linkId}&limit=100`, { token })).json.data;

const paymentOf = (location: string | null) => location!.split('/').pop()!.split('?')[0]!;

describe('payment links', () => {
  it('a fixed amount: the page, then the button makes a payment at the link price, with paymentLinkID; paid on the sandbox, the link counts it', async () => {
    const link = await createLink({ currency: 'TON', amount: '1.5', description: 'Tea', payment_options: TON, maxPayments: 5 });
    assert.equal(link.url, `${app.config.checkoutBaseUrl}/l/${link.id}`);
    assert.equal(link.active, true);
    assert.equal(link.state, 'open');
    assert.equal(link.payments, 0);
    assert.equal(link.amountPaid, '0');

    const shown = await visit(link.url);
    assert.equal(shown.status, 200, shown.text);
    assert.match(shown.text, /<h1 id="store-name">[^<]+<\/h1>/);
    assert.match(shown.text, /1\.5 GRAM/);
    assert.match(shown.text, new RegExp(`<form method="post" action="/pay/l/${link.id}"`));
    const first = await ask(link.url);
    assert.equal(first.status, 303, first.text);
    const paymentId = paymentOf(first.location);
    assert.match(first.setCookie!, new RegExp(`^kassa_link_payment=${paymentId}; Path=${new URL(link.url).pathname}; HttpOnly; SameSite=Lax`));
    const payment = await app.request('GET', `/v1/payments/${paymentId}`, { token });
    assert.equal(payment.status, 200, payment.text);
    assert.equal(payment.json.paymentLinkID, link.id);
    assert.equal(payment.json.amount, '1.5');
    assert.equal(payment.json.currency, 'TON');
    assert.equal(payment.json.description, 'Tea');
    assert.equal(payment.json.status, 'pending');

    // The checkout the visit led to shows that payment.
    const page = await fetch(`${app.url}${first.location}`);
    assert.equal(page.status, 200);

    await app.pay(payment.json.paymentDetails.address, 'TON', '1.5');
    await app.settle();
    const after = await app.request('GET', `/v1/payment-links/${link.id}`, { token: readToken });
    assert.equal(after.status, 200, after.text);
    assert.equal(after.json.payments, 1);
    assert.equal(after.json.amountPaid, '1.5');

    const listed = await app.request('GET', `/v1/payments?payment_link=${link.id}`, { token });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.json.data.map((p: { id: string }) => p.id),
      [paymentId],
    );
    assert.equal(listed.json.data[0].status, 'completed');
  });

  it('a fiat price: the payment is priced at that moment, converted at its own rate', async () => {
    const link = await createLink({ currency: 'USD', amount: '3', payment_options: TON });
    const visited = await ask(link.url);
    const payment = await app.request('GET', `/v1/payments/${paymentOf(visited.location)}`, { token });
    assert.equal(payment.json.currency, 'USD');
    assert.equal(payment.json.amount, '3');
    assert.equal(payment.json.paymentDetails.coin.symbol, 'TON');
    assert.ok(Number(payment.json.paymentDetails.coinAmount) > 0);
  });

  it('a reload or a second tab reuses the open payment; a second visitor gets their own', async () => {
    const link = await createLink({ currency: 'TON', amount: '2', payment_options: TON });
    const first = await ask(link.url);
    const again = await visit(link.url, first.cookie);
    assert.equal(again.status, 303);
    assert.equal(paymentOf(again.location), paymentOf(first.location));
    assert.equal(again.setCookie, null);
    // A second press (a double click) goes back to it too.
    const pressedAgain = await ask(link.url, {}, first.cookie);
    assert.equal(paymentOf(pressedAgain.location), paymentOf(first.location));
    const other = await ask(link.url);
    assert.notEqual(paymentOf(other.location), paymentOf(first.location));
    // A cookie holding another link's payment is not reused here.
    const elsewhere = await createLink({ currency: 'TON', amount: '2', payment_options: TON });
    const foreign = await ask(elsewhere.url, {}, first.cookie);
    assert.notEqual(paymentOf(foreign.location), paymentOf(first.location));
    const listed = await app.request('GET', `/v1/payments?payment_link=${link.id}`, { token });
    assert.equal(listed.json.data.length, 2);
  });

  it('an open amount: a form first, then the typed amount within min and max', async () => {
    const link = await createLink({ currency: 'TON', minAmount: '0.5', maxAmount: '10', payment_options: TON });
    assert.equal(link.amount, undefined);
    assert.equal(link.minAmount, '0.5');
    const form = await visit(link.url);
    assert.equal(form.status, 200);
    assert.match(form.text, /<label class="field-label" for="amount">Amount in GRAM<\/label>/);
    assert.match(form.text, /From 0\.5 to 10\./);
    // An amount in the address (the form's answer in older versions) fills the field and makes nothing.
    const prefilled = await visit(`${link.url}?amount=2.25`);
    assert.equal(prefilled.status, 200);
    assert.match(prefilled.text, /value="2\.25"/);
    assert.deepEqual(await linkPayments(link.id), []);
    for (const [typed, text] of [
      ['abc', /Enter an amount such as 10\.50/],
      ['0.1', /at least 0\.5/],
      ['11', /at most 10/],
      ['1.0000000001', /too many digits/],
      ['1,2,3', /Enter an amount such as 10\.50/],
    ] as const) {
      const refused = await ask(link.url, { amount: typed });
      assert.equal(refused.status, 400, typed);
      assert.match(refused.text, text);
      assert.match(refused.text, /aria-invalid="true"/);
    }
    const paid = await ask(link.url, { amount: '2.25' });
    assert.equal(paid.status, 303, paid.text);
    const payment = await app.request('GET', `/v1/payments/${paymentOf(paid.location)}`, { token });
    assert.equal(payment.json.amount, '2.25');
    assert.equal(payment.json.paymentLinkID, link.id);
  });

  it('an open amount follows the API’s amount rule: longer than 40 characters (41 to 4,000 digits) is refused with a clear message, as the API refuses it, never a payment or a 500', async () => {
    const link = await createLink({ currency: 'TON', minAmount: '0.5', payment_options: TON });
    for (const typed of ['1'.repeat(41), `0.${'0'.repeat(38)}1`, '9'.repeat(400), '1'.repeat(4000)]) {
      const api = await app.request('POST', '/v1/payments', { token, body: { amount: typed, currency: 'TON', payment_options: TON } });
      assertError(api, 400, 'invalid_request_error', 'invalid_amount', 'amount');
      const refused = await ask(link.url, { amount: typed });
      assert.equal(refused.status, 400, `${typed.length} characters: ${refused.text.slice(0, 300)}`);
      assert.match(refused.text, /The amount is too long: at most 40 characters\./);
      assert.match(refused.text, /aria-invalid="true"/);
    }
    assert.deepEqual(await linkPayments(link.id), []);
  });

  it('an open amount typed with a comma is read as the customer meant: 0,5 is half a coin, 1 234,5 in Russian a thousand and more', async () => {
    const link = await createLink({ currency: 'TON', minAmount: '0.1', maxAmount: '5000', payment_options: TON });
    const half = await ask(link.url, { amount: '0,5' });
    assert.equal(half.status, 303, half.text);
    assert.equal((await app.request('GET', `/v1/payments/${paymentOf(half.location)}`, { token })).json.amount, '0.5');
    const russian = await ask(`${link.url}?lang=ru`, { amount: '1 234,5' });
    assert.equal(russian.status, 303, russian.text);
    assert.equal((await app.request('GET', `/v1/payments/${paymentOf(russian.location)}`, { token })).json.amount, '1234.5');
    const grouped = await ask(link.url, { amount: '1,000' });
    assert.equal((await app.request('GET', `/v1/payments/${paymentOf(grouped.location)}`, { token })).json.amount, '1000');
  });

  it('a visit makes no payment: a person, a chat app’s link preview and a crawler (GET and HEAD) see the page; only its POST makes one', async () => {
    const link = await createLink({ currency: 'TON', amount: '1', description: 'Coffee beans', payment_options: TON });
    const agents = ['TelegramBot (like TwitterBot)', 'WhatsApp/2.23.20.0', 'Slackbot-LinkExpanding 1.0', 'facebookexternalhit/1.1', 'Mozilla/5.0'];
    const { pathname } = new URL(link.url);
    for (const agent of agents) {
      for (const method of ['GET', 'HEAD']) {
        const response = await fetch(`${app.url}${pathname}`, { method, redirect: 'manual', headers: { 'user-agent': agent } });
        assert.equal(response.status, 200, `${method} by ${agent}`);
        assert.equal(response.headers.get('set-cookie'), null);
        await response.arrayBuffer();
      }
    }
    assert.deepEqual(await linkPayments(link.id), []);
    const asked = await ask(link.url);
    assert.equal(asked.status, 303);
    assert.equal((await linkPayments(link.id)).length, 1);
  });

  it('maxPayments holds under 20 requests at once: a payment being paid holds its place, one cancelled (or expired) frees it', async () => {
    // One place, twenty presses at once (each round a new link): exactly one payment each time.
    for (let round = 0; round < 5; round += 1) {
      const single = await createLink({ currency: 'TON', amount: '0.5', payment_options: TON, maxPayments: 1 });
      const statuses = (await Promise.all(Array.from({ length: 20 }, () => ask(single.url)))).map((answer) => answer.status);
      assert.deepEqual(statuses.toSorted(), [303, ...Array(19).fill(409)], `round ${round}`);
      assert.equal((await linkPayments(single.id)).length, 1);
    }
    const link = await createLink({ currency: 'TON', amount: '0.5', payment_options: TON, maxPayments: 2 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => ask(link.url)));
    const made = answers.filter((answer) => answer.status === 303);
    assert.equal(made.length, 2, answers.map((answer) => answer.status).join(','));
    assert.deepEqual(
      answers.filter((answer) => answer.status !== 303).map((answer) => answer.status),
      Array(18).fill(409),
    );
    assert.match(answers.find((answer) => answer.status === 409)!.text, /This payment link is busy/);
    assert.equal((await linkPayments(link.id)).length, 2);
    // A visit says so before the press.
    assert.equal((await visit(link.url)).status, 409);
    // The first is paid; the second is cancelled (as the reader's expiry would): its place is free again.
    const [first, second] = made.map((answer) => paymentOf(answer.location));
    const paying = await app.request('GET', `/v1/payments/${first}`, { token });
    await app.pay(paying.json.paymentDetails.address, 'TON', '0.5');
    await app.settle();
    assert.equal((await ask(link.url)).status, 409);
    assert.equal((await app.request('POST', `/v1/payments/${second}/cancel`, { token })).status, 200);
    const third = await ask(link.url);
    assert.equal(third.status, 303, third.text);
    // One completed and one open: busy again, never over its two.
    assert.equal((await ask(link.url)).status, 409);
    assert.deepEqual((await linkPayments(link.id)).map((p) => p.status).sort(), ['cancelled', 'completed', 'pending']);
  });

  it('used up, expired (driven clock), deactivated: the customer is told so (410), no payment is made', async () => {
    const usedUp = await createLink({ currency: 'TON', amount: '0.5', payment_options: TON, maxPayments: 1 });
    const visited = await ask(usedUp.url);
    const payment = await app.request('GET', `/v1/payments/${paymentOf(visited.location)}`, { token });
    await app.pay(payment.json.paymentDetails.address, 'TON', '0.5');
    await app.settle();
    const closed = await visit(usedUp.url, visited.cookie);
    assert.equal(closed.status, 410);
    assert.equal((await ask(usedUp.url)).status, 410);
    assert.match(closed.text, /already been paid as many times as the shop allowed/);
    const shown = await app.request('GET', `/v1/payment-links/${usedUp.id}`, { token });
    assert.equal(shown.json.state, 'used_up');
    assert.equal(shown.json.active, false);

    const expiresAt = new Date(Date.now() + 3_600_000);
    const expiring = await createLink({ currency: 'TON', amount: '1', payment_options: TON, expiresAt: expiresAt.toISOString() });
    app.clock.set(new Date(expiresAt.getTime() + 1000));
    try {
      const expired = await visit(expiring.url);
      assert.equal(expired.status, 410);
      assert.match(expired.text, /set date, which has passed/);
      assert.equal((await app.request('GET', `/v1/payment-links/${expiring.id}`, { token })).json.state, 'expired');
    } finally {
      app.clock.real();
    }

    const switchedOff = await createLink({ currency: 'TON', amount: '1', payment_options: TON });
    const deactivated = await app.request('POST', `/v1/payment-links/${switchedOff.id}/deactivate`, { token });
    assert.equal(deactivated.status, 200, deactivated.text);
    assert.equal(deactivated.json.active, false);
    assert.equal(deactivated.json.state, 'deactivated');
    const off = await visit(switchedOff.url);
    assert.equal(off.status, 410);
    assert.match(off.text, /switched it off/);
    const none = await app.request('GET', `/v1/payments?payment_link=${switchedOff.id}`, { token });
    assert.deepEqual(none.json.data, []);
    assert.equal((await visit(`${app.config.checkoutBaseUrl}/l/${crypto.randomUUID()}`)).status, 404);
  });

  it('lists the store’s links newest first, a page at a time; another store sees none of them', async () => {
    const a = await createLink({ currency: 'TON', amount: '1' });
    const b = await createLink({ currency: 'TON', amount: '1' });
    const page = await app.request('GET', '/v1/payment-links?limit=1', { token: readToken });
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(
      page.json.data.map((l: { id: string }) => l.id),
      [b.id],
    );
    assert.equal(page.json.has_more, true);
    const next = await app.request('GET', `/v1/payment-links?limit=1&starting_after=${b.id}`, { token: readToken });
    assert.deepEqual(
      next.json.data.map((l: { id: string }) => l.id),
      [a.id],
    );
    const other = await app.store({ methods: 'TON/TON' });
    assert.deepEqual((await app.request('GET', '/v1/payment-links', { token: other.token })).json.data, []);
    assertError(await app.request('GET', `/v1/payment-links/${a.id}`, { token: other.token }), 404, 'not_found_error', 'payment_link_not_found', 'id');
    assertError(
      await app.request('POST', `/v1/payment-links/${a.id}/deactivate`, { token: other.token }),
      404,
      'not_found_error',
      'payment_link_not_found',
      'id',
    );
  });

  it('refuses bad requests with the envelope and the param', async () => {
    const bad = (body: unknown) => app.request('POST', '/v1/payment-links', { token, body });
    assertError(await bad({ amount: '1' }), 400, 'invalid_request_error', 'missing_parameter', 'currency');
    assertError(await bad({ currency: 'TON', amount: '1', minAmount: '0.5' }), 400, 'invalid_request_error', 'invalid_link_amount', 'minAmount');
    assertError(await bad({ currency: 'TON', minAmount: '5', maxAmount: '1' }), 400, 'invalid_request_error', 'invalid_link_amount', 'maxAmount');
    assertError(await bad({ currency: 'TON', minAmount: '-1' }), 400, 'invalid_request_error', 'invalid_amount', 'minAmount');
    assertError(await bad({ currency: 'TON', maxAmount: '1.0000000001' }), 400, 'invalid_request_error', 'invalid_amount', 'maxAmount');
    assertError(await bad({ currency: 'XXX', amount: '1' }), 404, 'not_found_error', 'currency_not_found', 'currency');
    assertError(await bad({ currency: 'TON', amount: '1', maxPayments: 0 }), 400, 'invalid_request_error', 'invalid_max_payments', 'maxPayments');
    assertError(await bad({ currency: 'TON', amount: '1', expiresAt: 'tomorrow' }), 400, 'invalid_request_error', 'invalid_expires_at', 'expiresAt');
    assertError(
      await bad({ currency: 'TON', amount: '1', expiresAt: '2000-01-01T00:00:00Z' }),
      400,
      'invalid_request_error',
      'invalid_expires_at',
      'expiresAt',
    );
    assertError(
      await bad({ currency: 'TON', amount: '1', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } }),
      404,
      'not_found_error',
      'payment_method_not_found',
      'payment_options.methods',
    );
    assertError(await bad({ currency: 'TON', amount: '1', returnURL: 'http://127.0.0.1/' }), 400, 'invalid_request_error', 'invalid_return_url', 'returnURL');
    assertError(await app.request('GET', '/v1/payment-links/nope', { token }), 400, 'invalid_request_error', 'invalid_payment_link_id', 'id');
    assertError(await app.request('GET', '/v1/payments?payment_link=nope', { token }), 400, 'invalid_request_error', 'invalid_payment_link_id', 'payment_link');
    assertError(await app.request('GET', '/v1/payment-links'), 401, 'authentication_error', 'auth_invalid');
  });
});
