// The signer's clock (issue 44 §5): a message out is valid for OUTGOING_MESSAGE_TTL_SECONDS by the
// chain's time (the later of this machine's clock and the newest block's the chain reader saw), since
// its wallet checks valid_until against the chain's; a machine 90 s behind the chain still sends. A
// wallet's refusal of a message as expired while it was valid by that clock is counted
// (kassa_outgoing_expired_on_arrival_total) and logged as an error. On the real sandbox chain.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { outgoingExpiredOnArrival } from '../../src/metrics.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { outgoingOfPayment } from '../../src/treasury/outgoing.ts';
import { sendFromWallet, type SignerDeps } from '../../src/treasury/signer.ts';
import { refusedAsExpired, signingClock, validUntilOf } from '../../src/treasury/whatToSend.ts';
import { assertBooksMatchChain, freshAddress, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;
const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  }),
);

/** The signer as the worker makes it, on a machine whose clock is `offsetSeconds` off the wall clock (negative: behind). */
function signer(offsetSeconds: number): SignerDeps {
  return {
    pool: app.pool,
    config: app.config,
    client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }),
    log,
    now: () => new Date(Date.now() + offsetSeconds * 1000),
  };
}

const expiredOnArrival = async () => (await outgoingExpiredOnArrival.get()).values.reduce((sum, v) => sum + v.value, 0);

/** A completed 1 TON payment of the store: its sweep to the treasury planned. */
async function completedPayment(): Promise<{ id: string; wallet: string }> {
  const created = await app.request('POST', '/v1/payments', {
    token: store.token,
    body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'TON', '1');
  await app.settle();
  return { id: created.json.id, wallet: Address.parse(created.json.paymentDetails.address).toRawString() };
}

before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON' });
  treasury = freshAddress();
  await updateStore(app.pool, store.id, { treasury });
});
after(() => app.close());

describe('signingClock, validUntilOf, refusedAsExpired (pure)', () => {
  const wall = new Date('2026-11-28T12:00:00Z');
  it('signs by the later of the wall clock and the newest block; the wall clock before any block', () => {
    assert.equal(signingClock(wall, new Date('2026-11-28T12:01:30Z')).toISOString(), '2026-11-28T12:01:30.000Z');
    assert.equal(signingClock(wall, new Date('2026-11-28T11:59:58Z')), wall, 'a block a little old: the wall clock');
    assert.equal(signingClock(wall, null), wall);
    assert.equal(validUntilOf(new Date('2026-11-28T12:01:30.900Z'), 60), Date.parse('2026-11-28T12:02:30Z') / 1000);
  });
  it("tells a wallet's expiry refusal (v4r2 36, v5r1 136) from a seqno already used (33, 133) and other failures", () => {
    const refusal = (code: number) =>
      `chain API answered HTTP 500: LITE_SERVER_UNKNOWN: cannot apply external message to current state : External message was not accepted\nCannot run message on account: inbound external message rejected by transaction 0:AB:\nexitcode=${code}, steps=25, gas_used=0`;
    assert.deepEqual(
      [36, 136, 33, 133, 35, 1360].map((code) => refusedAsExpired(refusal(code))),
      [true, true, false, false, false, false],
    );
    assert.equal(refusedAsExpired('chain API unreachable at http://127.0.0.1:9/api/v2/jsonRPC: connect ECONNREFUSED'), false);
  });
});

describe("the signer's clock", () => {
  it('a signer whose clock is 90 s behind the chain signs by the newest block: its sweep is accepted, confirmed, the books match the chain', async () => {
    const payment = await completedPayment();
    const counted = await expiredOnArrival();
    const outcome = await sendFromWallet(signer(-90), payment.wallet);
    assert.equal(outcome.outcome, 'sent', JSON.stringify(outcome));
    const [signed] = await outgoingOfPayment(app.pool, payment.id, 'sweep');
    assert.ok(signed!.valid_until!.getTime() > Date.now() + 30_000, `valid until ${signed!.valid_until!.toISOString()}: by the chain's clock, not 30 s ago`);
    await app.settle();
    const [sweep] = await outgoingOfPayment(app.pool, payment.id, 'sweep');
    assert.equal(sweep!.state, 'confirmed', JSON.stringify(sweep));
    assert.equal(app.arrived(treasury, payment.wallet), toNano('1') - BigInt(sweep!.fee_base_units!));
    await assertBooksMatchChain(app, payment.id, payment.wallet);
    assert.equal(await expiredOnArrival(), counted, 'nothing refused as expired');
    assert.ok(!lines.some((line) => /refused the message as expired/.test(line.msg)));
  });

  it('a message the wallet refuses as expired while the signer held it valid (the chain ahead of every clock it has) is counted and logged as an error, not at info', async () => {
    const payment = await completedPayment();
    // The reader stops seeing blocks, and the chain moves 120 s past this machine's clock.
    await app.stopReader();
    app.sandbox.chain.advance(120);
    const counted = await expiredOnArrival();
    const outcome = await sendFromWallet(signer(0), payment.wallet);
    assert.equal(outcome.outcome, 'sent', JSON.stringify(outcome));
    assert.equal(await expiredOnArrival(), counted + 1, JSON.stringify(lines.slice(-3)));
    const said = lines.filter((line) => /refused the message as expired although it was valid/.test(line.msg));
    assert.equal(said.length, 1, JSON.stringify(lines.map((line) => line.msg)));
    assert.equal(said[0]!.level, 50, 'logged as an error');
    assert.match(String(said[0]!.err), /exitcode=136,/, "wallet v5r1's error::expired");
  });
});
