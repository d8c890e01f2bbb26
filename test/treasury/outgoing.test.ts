// Money out on the real sandbox chain (issue 12): completed TON payments swept to the store's
// (undeployed) treasury by the signer, confirmed by the chain reader with their fee; a store
// without a treasury keeps its money until it has one; held money swept after REFUND_HOLD_DAYS;
// a signer killed between signing and recording, or between recording and sending, sends once;
// a message lost until its valid_until passed is signed again and sent once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address, toNano } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { LATE_COMMIT_MARGIN_MS } from '../../src/chain/clock.ts';
import { SANDBOX_JSON_RPC_PATH } from '../../src/chain/sandbox/path.ts';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { depositMoney, outgoingOfPayment, type OutgoingRow } from '../../src/treasury/outgoing.ts';
import { planDueSweeps } from '../../src/treasury/sweeps.ts';
import { CLOSING_REFUND_FEE } from '../../src/treasury/closing.ts';
import { HELD_UNBOOKED_WARN_MS, sendFromWallet, type SignerDeps } from '../../src/treasury/signer.ts';
import { registry, useDatabaseForMetrics } from '../../src/metrics.ts';
import { checkHeldUnbooked } from '../../src/operations/doctor.ts';
import { MAX_MESSAGES_SIGNED } from '../../src/treasury/transitions.ts';
import { assertBooksMatchChain, freshAddress, sandboxBalances, startChainApp, type ChainTestApp } from '../helpers/chain.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
let app: ChainTestApp;
let store: Awaited<ReturnType<ChainTestApp['store']>>;
let treasury: string;

function signer(extra: Partial<SignerDeps> = {}): SignerDeps {
  return {
    pool: app.pool,
    config: app.config,
    client: createChainClient({ endpoint: `${app.url}${SANDBOX_JSON_RPC_PATH}` }),
    log,
    now: () => new Date(),
    ...extra,
  };
}

const balances = (address: string) => sandboxBalances(app, address);
const nano = async (address: string) => toNano((await balances(address)).TON!);

async function completedPayment(amount: string, paid = amount, token = store.token) {
  const created = await app.request('POST', '/v1/payments', {
    token,
    body: { amount, currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
  });
  assert.equal(created.status, 201, created.text);
  await app.pay(created.json.paymentDetails.address, 'TON', paid);
  await app.settle();
  const view = (await app.request('GET', `/v1/payments/${created.json.id}`, { token })).json;
  assert.equal(view.status, 'completed');
  return { id: created.json.id as string, wallet: Address.parse(created.json.paymentDetails.address).toRawString() };
}

async function only(paymentId: string): Promise<OutgoingRow> {
  const rows = await outgoingOfPayment(app.pool, paymentId);
  assert.equal(rows.length, 1, JSON.stringify(rows));
  return rows[0]!;
}

/** Outgoing transactions the wallet made (started by an external message), on chain. */
function walletSends(wallet: string): number {
  return app.sandbox.chain.transactionsOf(Address.parse(wallet)).filter((tx) => tx.inMessage?.info.type === 'external-in').length;
}

before(async () => {
  app = await startChainApp();
  store = await app.store({ methods: 'TON/TON' });
  treasury = freshAddress();
  await updateStore(app.pool, store.id, { treasury });
});
after(() => app.close());

describe('sweeping TON to the treasury', () => {
  it('a completed payment is planned for sweeping in the completing transaction, sent, and confirmed with its fee', async () => {
    const payment = await completedPayment('1.25');
    const planned = await only(payment.id);
    assert.equal(planned.kind, 'sweep');
    assert.equal(planned.reason, 'payment');
    assert.equal(planned.state, 'planned');
    assert.equal(planned.amount, '1.25');
    assert.equal(planned.from_address, payment.wallet);
    assert.equal(planned.to_address, treasury);
    const jobs = await app.pool.anyFirst(
      sql.type(z.object({ key: z.string().nullable() }))`select key from graphile_worker.jobs where task_identifier = 'outgoing__send'`,
    );
    assert.ok(jobs.includes(`outgoing__send:${payment.wallet}`), JSON.stringify(jobs));

    const deposit = await nano(payment.wallet);
    const result = await sendFromWallet(signer(), payment.wallet);
    assert.equal(result.outcome, 'sent');
    // Sent, or already confirmed: the background reader may have read its block by now.
    assert.ok(['sent', 'confirmed'].includes((await only(payment.id)).state));
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.match(done.transaction_hash!, /^[0-9a-f]{64}$/);
    assert.ok(BigInt(done.fee_base_units!) > 0n);
    // The whole deposit went (nothing else was in it): what arrived plus the fee is what it held.
    assert.equal(BigInt(done.sent_amount_base_units!) + BigInt(done.fee_base_units!), deposit);
    assert.equal(await nano(payment.wallet), 0n);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
    assert.equal(walletSends(payment.wallet), 1);
    assert.deepEqual(await sendFromWallet(signer(), payment.wallet), { outcome: 'idle' });
  });

  it('an overpaid payment: the counted amount less its fee reaches the treasury, the rest stays refundable; the books match the chain to the nanoTON', async () => {
    const payment = await completedPayment('1.5', '2');
    await sendFromWallet(signer(), payment.wallet);
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    // Other money stays in the deposit: the sweep's fee comes out of the counted money (0.01 TON set aside).
    assert.equal(done.sent_amount_base_units, toNano('1.49').toString());
    assert.equal(app.arrived(treasury, payment.wallet), toNano('1.49'));
    const [ton] = await depositMoney(app.pool, payment.id);
    assert.equal(ton!.coin_symbol, 'TON');
    assert.equal(ton!.counted, toNano('1.5').toString());
    assert.equal(BigInt(ton!.merchant_unswept), toNano('0.01') - BigInt(done.fee_base_units!));
    assert.equal(BigInt(ton!.refundable) + BigInt(ton!.merchant_unswept), await nano(payment.wallet));
    const reported = await app.pool.one(sql.type(z.object({ refundable: z.string(), decimals: z.number() }))`
      select refundable_base_units::text as refundable, decimals::int as decimals from reporting.refundable_money where payment_id = ${payment.id} and coin_symbol = 'TON'
    `);
    assert.deepEqual(reported, { refundable: ton!.refundable, decimals: 9 });

    // After REFUND_HOLD_DAYS the held half goes too (nothing before), and the merchant's change (what
    // the sweep's reserve left) in the same message: the deposit's last movement out (closing.ts).
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 0);
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date(Date.now() + 31 * 86_400_000) }), 1);
    const held = (await outgoingOfPayment(app.pool, payment.id)).find((o) => o.reason === 'held_money')!;
    assert.equal(held.amount_base_units, ton!.refundable);
    await sendFromWallet(signer(), payment.wallet);
    await app.settle();
    const swept = (await outgoingOfPayment(app.pool, payment.id)).find((o) => o.reason === 'held_money')!;
    const change = (await outgoingOfPayment(app.pool, payment.id)).find((o) => o.reason === 'leftover')!;
    assert.equal(swept.state, 'confirmed');
    assert.deepEqual([change.state, change.closing_of, change.transaction_hash], ['confirmed', swept.id, swept.transaction_hash]);
    assert.equal(change.amount_base_units, ton!.merchant_unswept);
    assert.equal(
      BigInt(change.sent_amount_base_units!) + BigInt(change.fee_base_units!),
      BigInt(ton!.merchant_unswept),
      'the change paid only its own forwarding',
    );
    assert.equal(await nano(payment.wallet), 0n);
    assert.equal(app.arrived(treasury, payment.wallet), toNano('1.49') + BigInt(swept.sent_amount_base_units!) + BigInt(change.sent_amount_base_units!));
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date(Date.now() + 31 * 86_400_000) }), 0);
    const [after] = await depositMoney(app.pool, payment.id);
    assert.deepEqual([after!.refundable, after!.merchant_unswept], ['0', '0']);
    assert.equal(
      await app.pool.oneFirst(
        sql.type(z.object({ r: z.string() }))`select refundable_base_units::text as r from reporting.refundable_money where payment_id = ${payment.id}`,
      ),
      '0',
    );
  });

  it('dust stays: late money under what a message costs (0.004 TON) is not swept, even in the final sweep, and is reported', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token: store.token,
      body: { amount: '1', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    const expired = await app.request('POST', `/sandbox/v1/payments/${created.json.id}/expire`, { token: store.token });
    assert.equal(expired.json.status, 'expired', expired.text);
    await app.pay(created.json.paymentDetails.address, 'TON', '0.0035');
    await app.settle();
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date(Date.now() + 31 * 86_400_000) }), 0);
    assert.equal((await outgoingOfPayment(app.pool, created.json.id)).length, 0);
    assert.equal(
      await app.pool.oneFirst(
        sql.type(z.object({ r: z.string() }))`select refundable_base_units::text as r from reporting.refundable_money where payment_id = ${created.json.id}`,
      ),
      toNano('0.0035').toString(),
    );
    assert.equal(await nano(created.json.paymentDetails.address), toNano('0.0035'));
  });

  it('a store without a treasury keeps its money until it has one, then what is due is swept', async () => {
    const other = await app.store({ name: 'No treasury yet', methods: 'TON/TON' });
    const payment = await completedPayment('0.7', '0.7', other.token);
    assert.equal((await outgoingOfPayment(app.pool, payment.id)).length, 0);
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 0);
    const itsTreasury = freshAddress();
    await updateStore(app.pool, other.id, { treasury: itsTreasury });
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 1);
    await sendFromWallet(signer(), payment.wallet);
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(app.arrived(itsTreasury, payment.wallet), BigInt(done.sent_amount_base_units!));
    assert.equal(await planDueSweeps(app.pool, { holdDays: 30, now: new Date() }), 0);
  });
});

describe('sending is safe to repeat', () => {
  it('killed between signing and recording, then restarted: sent once, nothing lost', async () => {
    const payment = await completedPayment('0.9');
    await assert.rejects(
      sendFromWallet(
        signer({
          hooks: {
            afterSign: () => {
              throw new Error('killed');
            },
          },
        }),
        payment.wallet,
      ),
      /killed/,
    );
    assert.equal((await only(payment.id)).state, 'planned');
    assert.equal(walletSends(payment.wallet), 0);
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'sent');
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.messages_signed, 1);
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
  });

  it('killed between recording and sending, then restarted: the recorded message is sent, once; repeats are harmless', async () => {
    const payment = await completedPayment('0.8');
    await assert.rejects(
      sendFromWallet(
        signer({
          hooks: {
            afterRecord: () => {
              throw new Error('killed');
            },
          },
        }),
        payment.wallet,
      ),
      /killed/,
    );
    const recorded = await only(payment.id);
    assert.equal(recorded.state, 'sent');
    assert.equal(recorded.broadcasts, 0);
    assert.equal(walletSends(payment.wallet), 0);
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'waiting');
    // and again, before the reader has seen it: the same message, refused by the wallet this time
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'waiting');
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.message_hash, recorded.message_hash);
    assert.equal(done.messages_signed, 1);
    assert.ok(done.broadcasts >= 2);
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
  });

  it('killed between broadcasting and the reader recording it, then restarted: the landed message is not sent again', async () => {
    const payment = await completedPayment('0.7');
    await assert.rejects(
      sendFromWallet(
        signer({
          hooks: {
            afterBroadcast: () => {
              throw new Error('killed');
            },
          },
        }),
        payment.wallet,
      ),
      /killed/,
    );
    const recorded = await only(payment.id);
    assert.equal(recorded.state, 'sent');
    assert.equal(recorded.broadcasts, 1);
    // The restarted signer finds it in flight: it broadcasts the same message (refused: the seqno moved on), signs nothing new.
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'waiting');
    await app.settle();
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'idle');
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.message_hash, recorded.message_hash);
    assert.equal(done.messages_signed, 1);
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
  });

  it('two signers at once: the one whose `signed` transition finds the transfer no longer planned records and broadcasts nothing', async () => {
    const payment = await completedPayment('0.6');
    let inner: Awaited<ReturnType<typeof sendFromWallet>> | null = null;
    const outer = await sendFromWallet(
      signer({
        hooks: {
          // While this run holds its signed message, another run signs, records and broadcasts its own.
          afterSign: async () => {
            inner = await sendFromWallet(signer(), payment.wallet);
          },
        },
      }),
      payment.wallet,
    );
    assert.equal(inner!.outcome, 'sent');
    assert.equal(outer.outcome, 'idle');
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.messages_signed, 1);
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
  });

  it('a message that expires unseen is signed again with a fresh seqno and sent once', async () => {
    const payment = await completedPayment('0.6');
    const lost = signer({ messageTtlSeconds: 1, hooks: { broadcast: async () => {} } });
    assert.equal((await sendFromWallet(lost, payment.wallet)).outcome, 'sent');
    const first = await only(payment.id);
    assert.equal(first.state, 'sent');
    // Not yet: the chain has not been read past its valid_until.
    assert.equal((await sendFromWallet(lost, payment.wallet)).outcome, 'waiting');
    // Past its valid_until but within the late-commit margin: its shard block could still be committed.
    await app.advanceChain(3);
    assert.equal((await sendFromWallet(signer(), payment.wallet)).outcome, 'waiting');
    assert.equal((await only(payment.id)).messages_signed, 1);
    // The chain's clock past valid_until + the margin (not waiting for it), read by the reader.
    await app.advanceChain(LATE_COMMIT_MARGIN_MS / 1000);
    // Signed by the chain's clock, now ahead of the wall clock (the wallet checks valid_until against it).
    const again = await sendFromWallet(signer({ now: () => new Date(app.sandbox.chain.now * 1000) }), payment.wallet);
    assert.equal(again.outcome, 'sent');
    await app.settle();
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.messages_signed, 2);
    assert.notEqual(done.message_hash, first.message_hash);
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), BigInt(done.sent_amount_base_units!));
  });
});

describe('the closing message (issue 29 item 4)', () => {
  it("one that expires unseen: its shares are failed, never sent alone; the refund's next message pays them afresh, once; chain = books", async () => {
    const payment = await completedPayment('1', '1.5');
    await app.drain(payment.wallet); // the sale swept: the merchant's change (the sweep's unused reserve) stays
    const [before] = await depositMoney(app.pool, payment.id);
    const everything = BigInt(before!.refundable);
    const customer = freshAddress();
    const asked = await app.request('POST', `/v1/payments/${payment.id}/refunds`, {
      token: store.token,
      body: { coin: 'TON', amount: (Number(everything) / 1e9).toFixed(9), address: customer },
    });
    assert.equal(asked.status, 201, asked.text);
    const lost = signer({ messageTtlSeconds: 1, hooks: { broadcast: async () => {} } });
    assert.equal((await sendFromWallet(lost, payment.wallet)).outcome, 'sent');
    const first = (await outgoingOfPayment(app.pool, payment.id)).filter((row) => row.closing_of === asked.json.id);
    assert.deepEqual(
      first.map((row) => [row.reason, row.state, row.amount_base_units]),
      [['leftover', 'sent', before!.merchant_unswept]],
    );
    await app.advanceChain(3 + LATE_COMMIT_MARGIN_MS / 1000);
    const again = await sendFromWallet(signer({ now: () => new Date(app.sandbox.chain.now * 1000) }), payment.wallet);
    assert.equal(again.outcome, 'sent');
    await app.settle();
    const rows = await outgoingOfPayment(app.pool, payment.id);
    const refund = rows.find((row) => row.id === asked.json.id)!;
    // Its shares (the carry-all's rows, booked when it landed, aside: what the refund's fee did not use).
    const shares = rows.filter((row) => row.closing_of === refund.id && row.reason === 'leftover');
    assert.deepEqual([refund.state, refund.messages_signed], ['confirmed', 2]);
    assert.deepEqual(
      shares.map((row) => [row.state, row.messages_signed, row.transaction_hash === refund.transaction_hash]),
      [
        ['failed', 1, false],
        ['confirmed', 1, true],
      ],
    );
    assert.match(shares[0]!.failure_reason!, /closing message expired unseen/);
    assert.equal(walletSends(payment.wallet), 2, 'the sweep, then one closing message');
    assert.equal(app.arrived(Address.parse(customer).toRawString(), payment.wallet), everything - CLOSING_REFUND_FEE);
    assert.equal(await nano(payment.wallet), 0n);
    await assertBooksMatchChain(app, payment.id, payment.wallet);
  });
});

describe('a message committed late (issue 31)', () => {
  // The signer by the chain's clock (pinned here), messages valid 10 s; the test seals every block itself.
  const chain = () => app.sandbox.chain;
  const byChain = () => signer({ now: () => new Date(chain().now * 1000), messageTtlSeconds: 10 });

  /** Sends an overpaid payment's sweep (0.49 TON of 2 leave: a second payment would show) and holds its transaction back for `blocks` seals. */
  async function sentAndHeld(blocks: number) {
    chain().stopBlockClock();
    chain().setNow(chain().now);
    const payment = await completedPayment('0.5', '2');
    assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'sent');
    chain().commitLate(blocks);
    const m1 = await only(payment.id);
    assert.equal(m1.state, 'sent');
    assert.equal(walletSends(payment.wallet), 1, 'the wallet accepted M1 (its shard block is not committed yet)');
    return { payment, m1, validUntil: Math.floor(m1.valid_until!.getTime() / 1000) };
  }

  /** One payment left, one confirmed row, chain = books to the nanoTON. */
  async function paidOnce(payment: { id: string; wallet: string }, m1: OutgoingRow) {
    const done = await only(payment.id);
    assert.equal(done.state, 'confirmed');
    assert.equal(done.message_hash, m1.message_hash, 'confirmed by the message that landed');
    assert.equal(done.wallet_seqno, m1.wallet_seqno);
    assert.equal(done.sent_amount_base_units, toNano('0.49').toString());
    assert.equal(walletSends(payment.wallet), 1);
    assert.equal(app.arrived(treasury, payment.wallet), toNano('0.49'));
    const [ton] = await depositMoney(app.pool, payment.id);
    assert.equal(BigInt(ton!.refundable) + BigInt(ton!.merchant_unswept), await nano(payment.wallet));
    return done;
  }

  it('accepted before valid_until, committed 20 s after it: still in flight, not signed again, confirmed once', async () => {
    try {
      const { payment, m1, validUntil } = await sentAndHeld(3);
      chain().setNow(validUntil + 20);
      await app.settle(); // two blocks past valid_until, M1 still held back
      assert.ok((await app.cursor())!.settledUntil.getTime() > validUntil * 1000);
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'waiting');
      assert.equal((await only(payment.id)).messages_signed, 1);
      await app.settle(); // the third block commits M1
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'idle');
      assert.equal((await paidOnce(payment, m1)).messages_signed, 1);
    } finally {
      chain().startBlockClock();
    }
  });

  it('committed past the margin: M1 late → planned again → M2 (same seqno) refused → M1 lands and confirms → M2 expires → nothing more is signed', async () => {
    try {
      const { payment, m1, validUntil } = await sentAndHeld(3);
      chain().setNow(validUntil + LATE_COMMIT_MARGIN_MS / 1000 + 2);
      await app.settle(); // read past valid_until + the margin without seeing M1 (held back)
      // Planned again and signed with the seqno v2 reports as of the last masterchain block (M1 not in one yet): refused.
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'sent');
      const m2 = await only(payment.id);
      assert.equal(m2.state, 'sent');
      assert.equal(m2.messages_signed, 2);
      assert.equal(m2.wallet_seqno, m1.wallet_seqno);
      assert.notEqual(m2.message_hash, m1.message_hash);
      assert.equal(walletSends(payment.wallet), 1, 'M2 was refused');
      await app.settle(); // M1 lands: it confirms the transfer by the hash kept for it
      assert.equal((await only(payment.id)).state, 'confirmed');
      // M2's time passes too: nothing is planned again, nothing more is signed.
      chain().advance(10 + LATE_COMMIT_MARGIN_MS / 1000 + 2);
      await app.settle();
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'idle');
      await app.settle();
      const done = await paidOnce(payment, m1);
      // messages_signed counts every message signed for it (outgoing_messages), the one that landed included.
      assert.equal(done.messages_signed, 2);
      const kept = await app.pool.anyFirst(
        sql.type(
          z.object({ message_hash: z.string() }),
        )`select message_hash from outgoing_messages where transfer_id = ${done.id} order by signed_at, wallet_seqno`,
      );
      assert.deepEqual(new Set(kept), new Set([m1.message_hash, m2.message_hash]));
    } finally {
      chain().startBlockClock();
    }
  });

  it('failed after every message expired unseen, then its first lands later still: the row confirms, the sweep planned again is failed unsent; paid once, chain = books', async () => {
    try {
      const { payment, m1 } = await sentAndHeld(30);
      // M1 held back: each message signed again (the same seqno, refused) expires unseen, until the transfer fails.
      let failed: OutgoingRow | undefined;
      for (let n = 1; n <= MAX_MESSAGES_SIGNED + 1 && !failed; n += 1) {
        const row = await only(payment.id);
        if (row.state === 'failed') failed = row;
        else {
          chain().setNow(Math.floor(row.valid_until!.getTime() / 1000) + LATE_COMMIT_MARGIN_MS / 1000 + 2);
          await app.settle();
          await sendFromWallet(byChain(), payment.wallet);
        }
      }
      assert.ok(failed, 'failed after MAX_MESSAGES_SIGNED messages expired unseen');
      assert.equal(failed.failure_kind, 'transient');
      assert.equal(failed.messages_signed, MAX_MESSAGES_SIGNED);
      // Its retry time comes: the sweep is planned again, and signed with the seqno v2 still reports (refused).
      await planDueSweeps(app.pool, { holdDays: 30, now: new Date(failed.retry_at!.getTime() + 1_000) });
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'sent');
      const replan = (await outgoingOfPayment(app.pool, payment.id)).find((row) => row.id !== failed.id)!;
      assert.equal(replan.state, 'sent');
      assert.equal(walletSends(payment.wallet), 1, 'only M1 was accepted');
      // M1's shard block is committed at last: it confirms the failed row; the re-plan can never be paid.
      for (let i = 0; i < 20; i += 1) chain().sealBlock();
      await app.settle();
      const rows = await outgoingOfPayment(app.pool, payment.id);
      assert.deepEqual(
        rows.map((row) => [row.id, row.state, row.failure_kind]),
        [
          [failed.id, 'confirmed', null],
          [replan.id, 'failed', 'permanent'],
        ],
      );
      assert.equal(rows[0]!.message_hash, m1.message_hash, 'confirmed by the message that landed');
      assert.equal(rows[0]!.sent_amount_base_units, toNano('0.49').toString());
      assert.match(rows[1]!.failure_reason!, new RegExp(failed.id));
      // Nothing more is signed, nothing is planned again for that money.
      chain().advance(10 + LATE_COMMIT_MARGIN_MS / 1000 + 2);
      await app.settle();
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'idle');
      await planDueSweeps(app.pool, { holdDays: 30, now: new Date(chain().now * 1000 + 86_400_000) });
      assert.equal((await outgoingOfPayment(app.pool, payment.id)).length, 2);
      assert.equal(walletSends(payment.wallet), 1);
      assert.equal(app.arrived(treasury, payment.wallet), toNano('0.49'));
      await assertBooksMatchChain(app, payment.id, payment.wallet);
    } finally {
      chain().startBlockClock();
    }
  });

  it("committed past the margin while the reader lags the v2 API: the wallet's seqno moved past the books, so nothing is signed until M1 is booked", async () => {
    try {
      const { payment, m1, validUntil } = await sentAndHeld(4);
      chain().setNow(validUntil + LATE_COMMIT_MARGIN_MS / 1000 + 2);
      await app.settle(); // read past valid_until + the margin without seeing M1 (held back)
      // M1's shard block is committed, but the indexer (and so the reader) has not served it yet: v2 already answers seqno S + 1.
      chain().holdBlocks();
      chain().sealBlock();
      chain().sealBlock();
      const outcome = await sendFromWallet(byChain(), payment.wallet);
      assert.equal(outcome.outcome, 'unbooked_message', JSON.stringify(outcome));
      assert.equal(walletSends(payment.wallet), 1, 'nothing signed with the seqno after M1: it would have paid the sweep twice');
      assert.equal((await only(payment.id)).messages_signed, 1);
      // Held, and seen held: the gauges, and the doctor once it lasts (the signer looks again every 30 s, with no end).
      useDatabaseForMetrics(app.pool);
      const gauge = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;
      assert.equal(await gauge('kassa_outgoing_held_unbooked_transfers'), 1);
      assert.equal((await checkHeldUnbooked(app.pool)).status, 'ok');
      const later = await checkHeldUnbooked(app.pool, new Date(Date.now() + HELD_UNBOOKED_WARN_MS + 60_000));
      assert.equal(later.status, 'warn');
      assert.match(later.detail, new RegExp(`${payment.wallet}: 1 transfer`));
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'unbooked_message');
      chain().releaseBlocks();
      await app.settle(); // the reader books M1: it confirms the transfer by the hash kept for it
      assert.equal((await sendFromWallet(byChain(), payment.wallet)).outcome, 'idle');
      await paidOnce(payment, m1);
      assert.equal(await gauge('kassa_outgoing_held_unbooked_transfers'), 0);
      assert.equal(await gauge('kassa_outgoing_held_unbooked_oldest_seconds'), 0);
      assert.equal((await checkHeldUnbooked(app.pool, new Date(Date.now() + HELD_UNBOOKED_WARN_MS + 60_000))).status, 'ok');
    } finally {
      chain().releaseBlocks();
      chain().startBlockClock();
    }
  });
});
