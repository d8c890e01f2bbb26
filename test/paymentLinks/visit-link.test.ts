// A customer at a payment link's page (issue 49 item 2): the command visitLink against the real
// database, with an explicit `now` — a visit makes nothing; a press makes one payment; the visitor's
// open payment is reused (its id as their cookie held it, checked against the link); a typed amount
// the link does not take is refused with why; a closed or full link says so; no such link is
// payment_link_not_found. The route (http/routes/checkoutLinks.ts) is payment-links.test.ts's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { KassaError } from '../../src/errors.ts';
import { visitLink } from '../../src/paymentLinks/visitLink.ts';
import type { TestApp } from '../helpers/app.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

let app: TestApp;
let token: string;

before(async () => {
  app = await startPaymentsApp();
  token = (await app.store({ name: 'Visited' })).token;
});
after(() => app.close());

async function createLink(body: Record<string, unknown>): Promise<string> {
  const created = await app.request('POST', '/v1/payment-links', { token, body });
  assert.equal(created.status, 201, created.text);
  return created.json.id;
}
const paymentsOf = (linkId: string) =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payments where payment_link_id = ${linkId}`);
const visit = (linkId: string, heldPaymentId: string | null, pay: { typed: string; lang: string } | null, now = new Date()) =>
  visitLink(app.pool, app.config, { linkId, heldPaymentId, pay }, now);

describe('visitLink: a visit shows, a press makes one payment, the visitor’s open payment is theirs again', () => {
  it('a visit makes nothing; a press makes one payment; the cookie’s payment is reused by a visit or a press, another link’s or a malformed id is not', async () => {
    const linkId = await createLink({ currency: 'TON', amount: '1.5' });
    const shown = await visit(linkId, null, null);
    assert.equal(shown.outcome, 'shown');
    assert.equal(shown.link.id, linkId);
    assert.equal(await paymentsOf(linkId), 0);

    const created = await visit(linkId, null, { typed: 'ignored: the link has its amount', lang: 'en' });
    assert.equal(created.outcome, 'created');
    assert.ok(created.outcome === 'created' && created.expiresAt.getTime() > Date.now());
    const paymentId = created.outcome === 'created' ? created.paymentId : '';
    assert.equal(await paymentsOf(linkId), 1);
    const made = await app.request('GET', `/v1/payments/${paymentId}`, { token });
    assert.equal(made.json.amount, '1.5');

    for (const pay of [null, { typed: '', lang: 'en' }]) {
      const again = await visit(linkId, paymentId.toUpperCase(), pay);
      assert.deepEqual(again.outcome === 'reused' && again.paymentId, paymentId, `${pay ? 'a press' : 'a visit'} goes back to the open payment`);
    }
    assert.equal(await paymentsOf(linkId), 1);

    // Another link's payment, a malformed id: a new visitor.
    const other = await createLink({ currency: 'TON', amount: '2' });
    assert.equal((await visit(other, paymentId, null)).outcome, 'shown');
    assert.equal((await visit(linkId, 'not-a-uuid', null)).outcome, 'shown');
    // Past the payment's expiry it is no longer theirs to reuse.
    const later = new Date(Date.now() + 24 * 3600_000);
    assert.equal((await visit(linkId, paymentId, null, later)).outcome, 'shown');
  });

  it('an open amount is read in the page’s language and refused with why when the link does not take it', async () => {
    const linkId = await createLink({ currency: 'TON', minAmount: '1', maxAmount: '10' });
    for (const [typed, problem] of [
      ['abc', 'invalid'],
      ['0,5', 'below'],
      ['11', 'above'],
      ['1.0000000001', 'decimals'],
    ] as const) {
      const refused = await visit(linkId, null, { typed, lang: 'ru' });
      assert.deepEqual(refused.outcome === 'refused' && [refused.typed, refused.problem], [typed, problem], typed);
    }
    assert.equal(await paymentsOf(linkId), 0);
    const created = await visit(linkId, null, { typed: '2,5', lang: 'ru' });
    assert.equal(created.outcome, 'created');
    const made = await app.request('GET', `/v1/payments/${created.outcome === 'created' ? created.paymentId : ''}`, { token });
    assert.equal(made.json.amount, '2.5');
  });

  it('a closed link says why; a full one says so at the visit and at the press; no link is payment_link_not_found', async () => {
    const limited = await createLink({ currency: 'TON', amount: '1', maxPayments: 1 });
    assert.equal((await visit(limited, null, { typed: '', lang: 'en' })).outcome, 'created');
    for (const pay of [null, { typed: '', lang: 'en' }]) {
      const full = await visit(limited, null, pay);
      assert.deepEqual(full.outcome === 'closed' && full.state, 'full', pay ? 'a press' : 'a visit');
    }
    const expiring = await createLink({ currency: 'TON', amount: '1', expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    const expired = await visit(expiring, null, null, new Date(Date.now() + 2 * 3600_000));
    assert.deepEqual(expired.outcome === 'closed' && expired.state, 'expired');
    const off = await createLink({ currency: 'TON', amount: '1' });
    assert.equal((await app.request('POST', `/v1/payment-links/${off}/deactivate`, { token })).status, 200);
    const deactivated = await visit(off, null, { typed: '', lang: 'en' });
    assert.deepEqual(deactivated.outcome === 'closed' && deactivated.state, 'deactivated');
    await assert.rejects(visit(crypto.randomUUID(), null, null), (error) => error instanceof KassaError && error.code === 'payment_link_not_found');
  });
});
