// Money for refund fees from the owner's wallet, on the sandbox chain (issue 47 item 3): the owner
// asks for a top-up on the Money page (over real HTTP), a sandbox wallet sends exactly the TON
// Connect request the page carries, and the chain reader books it to the store once — a block read
// again books nothing more; the same request sent twice is booked twice and shown twice (nothing
// lost); TON with no known reference stays on the books with no store. A token refund refused for
// want of it is accepted once it arrived; the home page warns of it only when a token refund is
// waiting or likely. A viewer cannot ask.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cell, toNano } from '@ton/core';
import { commentOf } from '../../src/chain/detect.ts';
import { sql, z } from '../../src/db/pool.ts';
import { fromBaseUnits } from '../../src/money.ts';
import { blockBooker } from '../../src/reader/book.ts';
import { gasWalletAddress, storeRefundGas } from '../../src/treasury/gas.ts';
import { createChainClient } from '../../src/chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { member, type DashboardClient } from '../helpers/dashboard.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let owner: DashboardClient;
let viewer: DashboardClient;
let wallet: string;

before(async () => {
  app = await startChainApp();
  store = await app.store({ name: 'Tea Room', methods: 'TON/TON,USDT/TON' });
  owner = await member(app.url, app.pool, store.id, 'owner@tearoom.example', 'owner');
  viewer = await member(app.url, app.pool, store.id, 'viewer@tearoom.example', 'viewer');
  wallet = (await app.request('POST', '/sandbox/v1/wallets')).json.address;
});
after(() => app?.close());

const money = `/dashboard/stores/${'{store}'}/money`;
const moneyPath = () => money.replace('{store}', store.id);
const htmlText = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The TON Connect request of the top-up `id` on the Money page (its Send button's data-request). */
const requestOn = (page: string, id: string) => {
  const item = page.slice(page.indexOf(`id="top-up-${id}"`));
  const match = /data-request="([^"]+)"/.exec(item.slice(0, item.indexOf('</li>')));
  return match ? (JSON.parse(htmlText(match[1]!)) as { validUntil: number; messages: { address: string; amount: string; payload: string }[] }) : null;
};
const available = async () => (await storeRefundGas(app.pool, store.id)).available;
const arrivals = () =>
  app.pool.any(sql.type(z.object({ top_up_id: z.string().nullable(), amount: z.string(), comment: z.string().nullable(), transaction_hash: z.string() }))`
    select top_up_id, amount_base_units::text as amount, comment, transaction_hash from gas_wallet_arrivals order by lt
  `);
/** Sends what the wallet was asked, as the wallet does: from `wallet`, to the message's address, its payload as the body. */
const send = (message: { address: string; amount: string; payload: string }) =>
  app.pay(message.address, 'TON', fromBaseUnits(BigInt(message.amount), 9), { from: wallet, payload: message.payload });

describe('money for refund fees from the owner wallet (issue 47 item 3)', () => {
  let topUpId: string;
  let request: NonNullable<ReturnType<typeof requestOn>>;

  it('a new store that takes USDT, with no USDT refund waiting or made: its home page says nothing of refund fees; the Money page shows the balance and what it buys', async () => {
    const home = await owner.get(`/dashboard/stores/${store.id}`);
    assert.equal(home.status, 200);
    assert.doesNotMatch(home.text, /attention-gas/);
    const page = await owner.get(moneyPath());
    assert.match(page.text, /id="refund-fees-balance"/);
    assert.match(page.text, /not enough for a refund in USDT \(each uses about 0\.06 GRAM\)/);
    // In the shop's words: no "gas", "jetton" or "operator" in what the section says.
    const section = /<section[^>]*id="refund-fees"[\s\S]*?<\/section>/.exec(page.text)![0].replace(/<[^>]+>/g, ' ');
    assert.doesNotMatch(section, /\bgas\b|jetton|operator/i);
  });

  it('a viewer cannot ask for a top-up; an amount Kassa cannot read is refused beside the field', async () => {
    const refused = await viewer.post(`${moneyPath()}/refund-fees`, { amount: '0.12' });
    assert.equal(refused.status, 403);
    const bad = await owner.post(`${moneyPath()}/refund-fees`, { amount: 'lots' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="amount-problem"[^>]*>&quot;lots&quot; is not an amount/);
    const tooMuch = await owner.post(`${moneyPath()}/refund-fees`, { amount: '1000' });
    assert.equal(tooMuch.status, 400);
    assert.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from refund_fee_top_ups`), 0);
  });

  it('the owner asks (a comma decimal read as meant, audited); the page carries the wallet request: to the fee wallet, the amount, the reference as comment', async () => {
    const asked = await owner.post(`${moneyPath()}/refund-fees`, { amount: '0,12' });
    assert.equal(asked.status, 303, asked.text);
    topUpId = /asked=([0-9a-f-]{36})/.exec(asked.location!)![1]!;
    const row = await app.pool.one(sql.type(z.object({ reference: z.string(), amount: z.string(), asked_by: z.string() }))`
      select reference, amount_base_units::text as amount, asked_by from refund_fee_top_ups where id = ${topUpId}
    `);
    assert.deepEqual({ amount: row.amount, asked_by: row.asked_by }, { amount: toNano('0.12').toString(), asked_by: 'owner@tearoom.example' });
    assert.match(row.reference, /^Kassa refund fees [A-Z0-9]{10}$/);
    const page = await owner.get(asked.location!);
    assert.equal(page.status, 200);
    request = requestOn(page.text, topUpId)!;
    assert.ok(request, 'the Send button carries the request');
    assert.equal(request.messages.length, 1);
    const [message] = request.messages;
    assert.equal(message!.amount, toNano('0.12').toString());
    assert.equal(commentOf(Cell.fromBase64(message!.payload)), row.reference);
    const gas = (await gasWalletAddress(app.pool, 'sandbox'))!;
    assert.equal((await import('@ton/core')).Address.parse(message!.address).toRawString(), gas);
    // Its CSP lets TON Connect's UI run (styles under the response's nonce, the wallets' bridges).
    assert.match(page.headers.get('content-security-policy') ?? '', /style-src[^;]*'nonce-/);
    // A viewer sees the balance and the top-up, but no Send.
    const seen = await viewer.get(moneyPath());
    assert.match(seen.text, new RegExp(`id="top-up-${topUpId}"`));
    assert.equal(requestOn(seen.text, topUpId), null);
    const audit = await app.pool.any(sql.type(z.object({ actor: z.string(), subject: z.string().nullable() }))`
      select actor, subject from audit_log where store_id = ${store.id} and action = 'refund_fees.ask'
    `);
    assert.deepEqual(audit, [{ actor: 'owner@tearoom.example', subject: topUpId }]);
  });

  it('a USDT refund is refused for want of refund fees; the wallet sends the request; the reader books it to the store once (a block read again books nothing more), audited as the member; the refund is then accepted', async () => {
    // A customer paid 3 USDT for 2: 1 USDT is theirs to refund. The home page now warns (a USDT refund is waiting).
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '2', currency: 'USDT', payment_options: { methods: [{ coin: 'USDT', chain: 'TON' }] } },
    });
    await app.pay(created.json.paymentDetails.address, 'USDT', '3');
    await app.settle();
    const warned = await owner.get(`/dashboard/stores/${store.id}`);
    assert.match(warned.text, /id="attention-gas"[\s\S]*?a refund in USDT needs 0\.06 GRAM[\s\S]*?add some from your wallet/);
    const refund = () =>
      app.request('POST', `/v1/payments/${created.json.id}/refunds`, { token: store.token, body: { coin: 'USDT', amount: '1', address: freshAddress() } });
    const unpaid = await refund();
    assert.equal(unpaid.status, 409, unpaid.text);
    assert.equal(unpaid.json.error.code, 'refund_gas_unpaid');
    // The same refund from the payment's page: refused in the shop's words, pointing to the Money page (the API's message keeps its terms).
    const onPage = await owner.post(`/dashboard/stores/${store.id}/payments/${created.json.id}/refunds`, {
      coin: 'USDT',
      amount: '1',
      address: freshAddress(),
    });
    assert.equal(onPage.status, 400);
    const said = htmlText(/<p class="problem" role="alert">([^<]*)<\/p>/.exec(onPage.text)?.[1] ?? '');
    assert.match(
      said,
      /^A refund in a token such as USDT needs 0\.06 GRAM of the store's money for refund fees, and 0 GRAM is left\. An owner adds some from their wallet on the Money page/,
    );
    assert.doesNotMatch(said, /jetton|\bgas\b|operator|\bTON\b/);

    const before = (await app.cursor())!.last;
    await send(request.messages[0]!);
    await app.settle();
    assert.equal(await available(), toNano('0.12'));
    const booked = await arrivals();
    const ours = booked.filter((a) => a.top_up_id === topUpId);
    assert.equal(ours.length, 1);
    assert.equal(ours[0]!.amount, toNano('0.12').toString());
    // Every block since read again (as after a crash, or by a second reader): nothing more booked.
    const booker = blockBooker({
      pool: app.pool,
      network: 'sandbox',
      client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }),
      log: (await import('pino')).pino({ level: 'silent' }),
      now: () => new Date(),
    });
    const source = app.source();
    for (let seqno = before + 1; seqno <= (await app.cursor())!.last; seqno += 1) await booker.book((await source.block(seqno))!);
    assert.equal((await arrivals()).filter((a) => a.top_up_id === topUpId).length, 1);
    assert.equal(await available(), toNano('0.12'));
    const audit = await app.pool.any(sql.type(z.object({ actor: z.string(), actor_user_id: z.string().nullable(), detail: z.any() }))`
      select actor, actor_user_id, detail from audit_log where store_id = ${store.id} and action = 'refund_fees.arrived'
    `);
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.actor, 'owner@tearoom.example');
    assert.ok(audit[0]!.actor_user_id);
    assert.deepEqual(
      { amount: audit[0]!.detail.amount, transaction: audit[0]!.detail.transaction },
      { amount: '0.12', transaction: ours[0]!.transaction_hash },
    );
    // The Money page: the balance, what it buys, the top-up arrived (no Send any more); the home page no longer warns.
    const page = await owner.get(moneyPath());
    assert.match(page.text, /enough for about <strong id="refunds-covered">2<\/strong> refunds in USDT/);
    assert.equal(requestOn(page.text, topUpId), null);
    assert.match(page.text, new RegExp(`id="top-up-${topUpId}" data-arrivals="1"`));
    assert.doesNotMatch((await owner.get(`/dashboard/stores/${store.id}`)).text, /attention-gas/);
    const accepted = await refund();
    assert.equal(accepted.status, 201, accepted.text);
  });

  it('the same request sent again (twice, or late) is booked again and shown: nothing is lost', async () => {
    const before = await available();
    await send(request.messages[0]!);
    await app.settle();
    assert.equal(await available(), before + toNano('0.12'));
    assert.equal((await arrivals()).filter((a) => a.top_up_id === topUpId).length, 2);
    const page = await owner.get(moneyPath());
    assert.match(page.text, new RegExp(`id="top-up-${topUpId}" data-arrivals="2"`));
    assert.match(page.text, /It arrived 2 times \(each is added\)/);
  });

  it('TON reaching the fee wallet with no known reference stays on the books with no store; no store is credited', async () => {
    const before = await available();
    const gas = (await gasWalletAddress(app.pool, 'sandbox'))!;
    await app.pay(gas, 'TON', '0.05', { from: wallet, comment: 'Kassa refund fees ZZZZZZZZZZ' });
    await app.pay(gas, 'TON', '0.03', { from: wallet, comment: 'for the tea' });
    await app.settle();
    const unknown = (await arrivals()).filter((a) => a.top_up_id === null && a.comment !== null);
    assert.deepEqual(
      unknown.map((a) => [a.amount, a.comment]),
      [
        [toNano('0.05').toString(), 'Kassa refund fees ZZZZZZZZZZ'],
        [toNano('0.03').toString(), 'for the tea'],
      ],
    );
    assert.equal(await available(), before);
    const view = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from reporting.gas_wallet_arrivals where store_id is null and comment = 'for the tea'
    `);
    assert.equal(view, 1);
  });
});
