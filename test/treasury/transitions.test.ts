// The pure parts of money out: the outgoing transfer's transitions, what to send, whether a refund fits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendMode, toNano } from '@ton/core';
import {
  bookClosing,
  CLOSING_PRIMARY_MINIMUM,
  CLOSING_REFUND_FEE,
  closingActions,
  closingShares,
  finalSweep,
  type ClosingFacts,
} from '../../src/treasury/closing.ts';
import { decideRefund } from '../../src/treasury/refunds.ts';
import {
  MAX_MESSAGES_SIGNED,
  MAX_TRANSIENT_RETRIES,
  OUTGOING_STATE_RULES,
  OUTGOING_STATES,
  outgoingTransition,
  RETRY_BACKOFF_MS,
  retryAfter,
  type OutgoingEvent,
} from '../../src/treasury/transitions.ts';
import { JETTON_GAS_TOP_UP, MAX_TOP_UP_FAILURES, nextSeqno, whatToSend, whenToTopUp } from '../../src/treasury/whatToSend.ts';

const now = new Date('2026-01-01T00:00:00Z');

describe('outgoingTransition', () => {
  it("each state's rule (OUTGOING_STATE_RULES) names exactly the events that move a transfer out of it", () => {
    const events: OutgoingEvent[] = [
      { type: 'signed' },
      { type: 'expired_unseen' },
      { type: 'confirmed' },
      { type: 'superseded', by: 'T1' },
      { type: 'failed_on_chain', why: 'x' },
      { type: 'refused_by_jetton_wallet', why: 'x' },
      { type: 'bounced_at_destination', why: 'x' },
      { type: 'delivered' },
      { type: 'not_sendable', reason: 'x', permanent: false },
      { type: 'treasury_transfer_seen' },
      { type: 'signature_expired' },
    ];
    assert.deepEqual(Object.keys(OUTGOING_STATE_RULES).sort(), [...OUTGOING_STATES].sort());
    for (const state of OUTGOING_STATES) {
      // Every subject the transition looks at: landed or not, below or at the message cap.
      const subjects = [false, true].flatMap((landed) => [0, MAX_MESSAGES_SIGNED].map((messagesSigned) => ({ state, messagesSigned, retries: 0, landed })));
      const exits = events
        .filter((event) =>
          subjects.some((subject) => {
            const next = outgoingTransition(subject, event, now);
            return next.ok && next.to !== state;
          }),
        )
        .map((event) => event.type);
      assert.deepEqual([...OUTGOING_STATE_RULES[state].exits].sort(), exits.sort(), state);
      // Final: the store was told its end; only the chain's late word (a landing, a bounce) moves it, never the signer.
      const signerMoves = (['signed', 'expired_unseen', 'not_sendable'] as const).some((type) => OUTGOING_STATE_RULES[state].exits.some((e) => e === type));
      if (OUTGOING_STATE_RULES[state].final) assert.equal(signerMoves, false, state);
    }
  });

  it('planned → sent → confirmed; nothing else from those states', () => {
    assert.deepEqual(outgoingTransition({ state: 'planned', messagesSigned: 0, retries: 0 }, { type: 'signed' }, now), { ok: true, to: 'sent' });
    assert.deepEqual(outgoingTransition({ state: 'sent', messagesSigned: 1, retries: 0 }, { type: 'confirmed' }, now), { ok: true, to: 'confirmed' });
    assert.equal(outgoingTransition({ state: 'confirmed', messagesSigned: 1, retries: 0 }, { type: 'signed' }, now).ok, false);
    assert.equal(outgoingTransition({ state: 'failed', messagesSigned: 1, retries: 0 }, { type: 'confirmed' }, now).ok, false);
  });

  it('a failed transfer none of whose messages landed is confirmed when one lands late; one that landed is not; a re-plan of its money is superseded', () => {
    assert.deepEqual(outgoingTransition({ state: 'failed', messagesSigned: 5, retries: 0, landed: false }, { type: 'confirmed' }, now), {
      ok: true,
      to: 'confirmed',
    });
    assert.equal(outgoingTransition({ state: 'failed', messagesSigned: 1, retries: 0, landed: true }, { type: 'confirmed' }, now).ok, false);
    for (const state of ['planned', 'sent'] as const) {
      const superseded = outgoingTransition({ state, messagesSigned: 1, retries: 1 }, { type: 'superseded', by: 'T1' }, now);
      assert.ok(superseded.ok && superseded.to === 'failed', state);
      assert.equal(superseded.failure!.kind, 'permanent');
      assert.match(superseded.failure!.reason, /T1/);
    }
    assert.equal(outgoingTransition({ state: 'confirmed', messagesSigned: 1, retries: 0 }, { type: 'superseded', by: 'T1' }, now).ok, false);
  });

  it('a message that expired unseen is planned again, until MAX_MESSAGES_SIGNED: then a transient failure with a backoff', () => {
    assert.deepEqual(outgoingTransition({ state: 'sent', messagesSigned: 1, retries: 0 }, { type: 'expired_unseen' }, now), { ok: true, to: 'planned' });
    const gaveUp = outgoingTransition({ state: 'sent', messagesSigned: MAX_MESSAGES_SIGNED, retries: 0 }, { type: 'expired_unseen' }, now);
    assert.ok(gaveUp.ok && gaveUp.to === 'failed');
    assert.equal(gaveUp.failure!.kind, 'transient');
    assert.equal(gaveUp.failure!.retryAt!.getTime(), now.getTime() + 60_000);
  });

  it('failures that will not change are permanent; a transient one becomes permanent after its retries', () => {
    const chain = outgoingTransition({ state: 'sent', messagesSigned: 1, retries: 0 }, { type: 'failed_on_chain', why: 'action_failed' }, now);
    assert.ok(chain.ok && chain.failure!.kind === 'permanent' && chain.failure!.retryAt === null);
    const refused = outgoingTransition({ state: 'confirmed', messagesSigned: 1, retries: 0 }, { type: 'refused_by_jetton_wallet', why: 'exit code 333' }, now);
    assert.ok(refused.ok && refused.to === 'failed' && refused.failure!.kind === 'permanent');
    assert.equal(outgoingTransition({ state: 'sent', messagesSigned: 1, retries: 0 }, { type: 'refused_by_jetton_wallet', why: 'x' }, now).ok, false);
    const bounced = outgoingTransition({ state: 'confirmed', messagesSigned: 1, retries: 0 }, { type: 'bounced_at_destination', why: 'exit code 45' }, now);
    assert.ok(bounced.ok && bounced.to === 'failed' && bounced.failure!.kind === 'permanent');
    assert.match(bounced.failure!.reason, /came back to the deposit \(exit code 45\)/);
    assert.equal(outgoingTransition({ state: 'failed', messagesSigned: 1, retries: 0 }, { type: 'bounced_at_destination', why: 'x' }, now).ok, false);
    const lastTry = outgoingTransition(
      { state: 'planned', messagesSigned: 0, retries: MAX_TRANSIENT_RETRIES },
      { type: 'not_sendable', reason: 'busy', permanent: false },
      now,
    );
    assert.ok(lastTry.ok && lastTry.failure!.kind === 'permanent');
    assert.match(lastTry.failure!.reason, /gave up after 5 retries/);
  });

  it('backoff doubles', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((n) => retryAfter(n, now)?.getTime() ?? null),
      [1, 2, 4, 8, 16].map((m) => now.getTime() + m * 60_000).concat([null as never]),
    );
  });
});

describe('whatToSend', () => {
  const refund = (amount: string, feeReserved = toNano('0.01')) => ({
    kind: 'refund' as const,
    reason: 'refund',
    coin: 'TON',
    amount: toNano(amount),
    feeReserved,
  });
  it('a TON refund carries exactly its amount, its fee paid besides; refused when the wallet cannot pay both', () => {
    assert.deepEqual(whatToSend({ transfer: refund('0.5'), balance: toNano('1') }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('0.5'),
      carryAll: false,
    });
    const short = whatToSend({ transfer: refund('0.5'), balance: toNano('0.505') });
    assert.ok(short.action === 'fail' && short.permanent);
  });
  it("the refund of everything (no fee set aside) never carries the whole balance to the refund's address: exactly its amount less the reserve (a closing message empties the deposit)", () => {
    assert.deepEqual(whatToSend({ transfer: refund('2', 0n), balance: toNano('2') }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('1.99'),
      carryAll: false,
    });
    // A nanoTON more than planned (money arrived since, or another owner's): the same fixed value.
    assert.deepEqual(whatToSend({ transfer: refund('2', 0n), balance: toNano('2') + 1n }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('1.99'),
      carryAll: false,
    });
    assert.deepEqual(whatToSend({ transfer: refund('0.011041998', 0n), balance: toNano('5') }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('0.001041998'),
      carryAll: false,
    });
    const none = whatToSend({ transfer: refund('0.01', 0n), balance: toNano('5') });
    assert.ok(none.action === 'fail' && none.permanent, JSON.stringify(none));
  });
  it('a sweep: the last money carries all; beside other money its fee comes out of what it moves', () => {
    const sweep = { kind: 'sweep' as const, reason: 'payment', coin: 'TON', amount: toNano('1.5'), feeReserved: 0n };
    assert.equal((whatToSend({ transfer: sweep, balance: toNano('1.5') }) as { carryAll: boolean }).carryAll, true);
    assert.deepEqual(whatToSend({ transfer: sweep, balance: toNano('2') }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('1.49'),
      carryAll: false,
    });
  });
  it("a jetton transfer waits for gas unless Kassa's own TON in the deposit pays for it (never the customer's)", () => {
    const jetton = { kind: 'refund' as const, reason: 'refund', coin: 'USDT', amount: 1_000_000n, feeReserved: toNano('0.06') };
    // The deposit holds 1 TON of the customer's, no gas: a top-up is needed all the same.
    assert.deepEqual(whatToSend({ transfer: jetton, balance: toNano('1'), gas: -toNano('0.06') }), { action: 'wait_for_gas', topUp: JETTON_GAS_TOP_UP });
    assert.deepEqual(whatToSend({ transfer: jetton, balance: toNano('1'), gas: 0n }), {
      action: 'send',
      mode: SendMode.PAY_GAS_SEPARATELY,
      value: toNano('0.05'),
      carryAll: false,
    });
    assert.deepEqual(whatToSend({ transfer: jetton, balance: toNano('0.01'), gas: -toNano('0.001') }).action, 'wait_for_gas');
    // A shortfall beyond the smallest top-up: the shortfall and a margin for receiving it.
    assert.deepEqual(whatToSend({ transfer: jetton, balance: toNano('0'), gas: -toNano('0.12') }), { action: 'wait_for_gas', topUp: toNano('0.121') });
    assert.equal(whatToSend({ transfer: jetton, balance: toNano('0.065'), gas: toNano('0.005') }).action, 'send');
  });
  it("the seqno: the chain's, never behind what the books know the wallet accepted", () => {
    assert.equal(nextSeqno(3, 0), 3);
    assert.equal(nextSeqno(2, 5), 5);
  });
  it('the gas wallet short of what it owes waits for funding', () => {
    const topUp = { kind: 'gas_top_up' as const, reason: 'gas', coin: 'TON', amount: toNano('0.065'), feeReserved: 0n };
    assert.deepEqual(whatToSend({ transfer: topUp, balance: toNano('0.05'), batchTotal: toNano('0.065') }), { action: 'short_of_gas' });
    // A batch pays a fee per message beyond the wallet's reserve: 30 top-ups of 0.065 TON need 1.95 + 0.01 + 30 × 0.001.
    const batch = { transfer: topUp, batchTotal: toNano('1.95'), batchSize: 30 };
    assert.deepEqual(whatToSend({ ...batch, balance: toNano('1.98') }), { action: 'short_of_gas' });
    assert.equal(whatToSend({ ...batch, balance: toNano('1.99') }).action, 'send');
  });
  it("a jetton transfer's failed top-ups: backoff doubling from a minute, then the transfer gives up", () => {
    const t0 = new Date('2026-11-26T00:00:00Z');
    const at = (ms: number) => new Date(t0.getTime() + ms);
    assert.deepEqual(whenToTopUp({ count: 0, lastFailedAt: null }, t0), { action: 'plan' });
    assert.deepEqual(whenToTopUp({ count: 1, lastFailedAt: t0 }, at(30_000)), { action: 'wait', until: at(RETRY_BACKOFF_MS) });
    assert.deepEqual(whenToTopUp({ count: 1, lastFailedAt: t0 }, at(RETRY_BACKOFF_MS)), { action: 'plan' });
    assert.deepEqual(whenToTopUp({ count: 2, lastFailedAt: t0 }, at(RETRY_BACKOFF_MS)), { action: 'wait', until: at(2 * RETRY_BACKOFF_MS) });
    const gaveUp = whenToTopUp({ count: MAX_TOP_UP_FAILURES, lastFailedAt: t0 }, at(3_600_000));
    assert.equal(gaveUp.action, 'give_up');
  });
});

describe('decideRefund (the fee policy)', () => {
  it("a TON refund's fee comes out of the refundable TON; the refund of everything refundable takes it from itself, whatever else the deposit holds", () => {
    assert.deepEqual(decideRefund({ coin: 'TON', amount: toNano('0.49'), refundable: toNano('0.5') }), {
      ok: true,
      feeReserved: toNano('0.01'),
    });
    assert.deepEqual(decideRefund({ coin: 'TON', amount: toNano('0.495'), refundable: toNano('0.5') }), {
      ok: false,
      available: toNano('0.49'),
    });
    assert.deepEqual(decideRefund({ coin: 'TON', amount: toNano('0.5'), refundable: toNano('0.5') }), { ok: true, feeReserved: 0n });
    // No more than its fee's reserve: nothing would arrive.
    assert.deepEqual(decideRefund({ coin: 'TON', amount: toNano('0.01'), refundable: toNano('0.01') }), { ok: false, available: 0n });
  });
  it("a jetton refund takes only its jettons (its TON is Kassa's gas)", () => {
    assert.deepEqual(decideRefund({ coin: 'USDT', amount: 500_000n, refundable: 500_000n }), {
      ok: true,
      feeReserved: toNano('0.06'),
    });
    assert.deepEqual(decideRefund({ coin: 'USDT', amount: 500_001n, refundable: 500_000n }), { ok: false, available: 500_000n });
  });
});

describe('the closing message (closing.ts, issue 29 item 4)', () => {
  const facts = (over: Partial<ClosingFacts> = {}): ClosingFacts => ({
    primary: 500_000_000n,
    final: false,
    balance: 506_000_000n,
    paymentSettled: true,
    customerLeft: 0n,
    merchant: 6_000_000n,
    gas: 0n,
    gasFree: 0n,
    otherMoney: false,
    treasury: `0:${'a'.repeat(64)}`,
    gasWallet: `0:${'b'.repeat(64)}`,
    ...over,
  });
  it("pays each other owner's last share beside the refund of everything; a share under the minimum pays toward the fee instead", () => {
    assert.deepEqual(closingShares(facts()), [{ owner: 'merchant', reason: 'leftover', to: facts().treasury, amount: 6_000_000n, sent: true }]);
    const tiny = closingShares(facts({ merchant: 1_000_000n, gas: 3_000_000n, gasFree: 3_000_000n, balance: 504_000_000n }));
    assert.deepEqual(
      tiny?.map((share) => [share.reason, share.amount, share.sent]),
      [
        ['leftover', 1_000_000n, false],
        ['gas_return', 3_000_000n, true],
      ],
    );
    // Only the customer's money: no share (whatToSend's carry-all does it).
    assert.deepEqual(closingShares(facts({ merchant: 0n, balance: 500_000_000n })), []);
    // The deposit paid a little storage since its last transaction: still explained.
    assert.equal(closingShares(facts({ balance: 505_999_000n }))?.length, 1);
  });
  it('is no closing when another owner must keep their money or the books do not explain the balance', () => {
    assert.equal(closingShares(facts({ treasury: null })), null, 'no treasury: the merchant keeps it in the deposit');
    assert.equal(closingShares(facts({ gas: 3_000_000n, gasFree: 0n, balance: 509_000_000n })), null, 'gas promised to a jetton transfer');
    assert.equal(closingShares(facts({ otherMoney: true })), null, 'another coin or transfer');
    assert.equal(closingShares(facts({ customerLeft: 1n })), null, 'the customer keeps money: not everything');
    assert.equal(closingShares(facts({ paymentSettled: false })), null, 'the payment is open');
    assert.equal(closingShares(facts({ balance: 507_000_000n })), null, 'money the books have not seen');
    assert.equal(closingShares(facts({ balance: 496_000_000n })), null, 'the chain holds far less than the books');
  });
  it("signs the refund first as its exact value, the shares, and last the carry-all to the treasury or the gas wallet: never the refund's address", () => {
    const treasury = `0:${'a'.repeat(64)}`;
    const customer = `0:${'c'.repeat(64)}`;
    const shares = closingShares(facts({ merchant: 1_000_000n, gas: 3_000_000n, gasFree: 3_000_000n, balance: 504_000_000n }))!;
    const actions = closingActions({ kind: 'refund', to: customer, amount: 500_000_000n }, shares, treasury);
    assert.deepEqual(
      actions.map((a) => [a.of, a.to, a.value, a.mode]),
      [
        ['primary', customer, 500_000_000n - CLOSING_REFUND_FEE, 1],
        [1, facts().gasWallet, 3_000_000n, 0],
        ['carry_all', treasury, 0n, 128],
      ],
    );
    // A final sweep goes to the treasury already: it is its own carry-all.
    assert.deepEqual(
      closingActions({ kind: 'sweep', to: treasury, amount: 6_000_000n }, [], treasury).map((a) => [a.of, a.mode]),
      [['primary', 128]],
    );
  });
  const customer = `0:${'c'.repeat(64)}`;
  const treasury = `0:${'a'.repeat(64)}`;
  const gasWallet = `0:${'b'.repeat(64)}`;
  const refundClosing = {
    primary: { id: 'refund', kind: 'refund' as const, amount: 500_000_000n },
    actions: [
      { of: 'refund', role: 'primary' as const, to: customer, amount: 500_000_000n },
      { of: 'gas', role: 'share' as const, to: gasWallet, amount: 6_000_000n },
      { of: 'carry_all', role: 'carry_all' as const, to: treasury, amount: 0n },
    ],
    unsent: [{ id: 'leftover', amount: 1_000_000n }],
    total: 3_000_000n,
  };
  it("books each row: a share its own fee, the refund the rest of the fees, the carry-all's money on rows of their own; the fees add up to the transaction's, none below zero", () => {
    // Balance 507 000 000 + 200 000 000 arrived since: 496 000 000 to the customer, 5 600 000 to the gas
    // wallet, 3 000 000 fees; the carry-all the rest (202 400 000).
    const booked = bookClosing({
      ...refundClosing,
      out: [
        { destination: customer, value: 496_000_000n },
        { destination: gasWallet, value: 5_600_000n },
        { destination: treasury, value: 202_400_000n },
      ],
      skipped: 0,
      late: { customer: 200_000_000n, kassa: 0n },
    })!;
    assert.deepEqual(Object.fromEntries(booked.rows), {
      refund: { sent: 496_000_000n, fee: 2_600_000n, carried: false },
      gas: { sent: 5_600_000n, fee: 400_000n, carried: false },
      leftover: { sent: 1_000_000n, fee: 0n, carried: true },
    });
    assert.deepEqual(
      booked.carried.map((c) => [c.owner, c.why, c.sent, c.fee]),
      [
        ['customer', 'arrived_since', 200_000_000n, 0n],
        ['customer', 'unused_fee', 1_400_000n, 0n],
      ],
    );
    // Each owner took exactly its own: the customer 500 000 000 and what arrived since.
    assert.equal(496_000_000n + 2_600_000n + 1_400_000n, 500_000_000n);
    assert.deepEqual(booked.skippedShares, []);
  });
  it('a share the wallet skipped (+2) is carried by the carry-all to its destination, not booked as late money; fees that took more than the refund left are paid by the carried money', () => {
    const booked = bookClosing({
      ...refundClosing,
      total: 4_000_000n,
      out: [
        { destination: customer, value: 496_000_000n },
        { destination: treasury, value: 7_000_000n },
      ],
      skipped: 1,
      late: { customer: 0n, kassa: 0n },
    })!;
    assert.deepEqual(booked.skippedShares, ['gas']);
    assert.deepEqual(booked.rows.get('gas'), { sent: 6_000_000n, fee: 0n, carried: true });
    assert.deepEqual(booked.carried, [], 'no late money');
    // 503 000 000 + 4 000 000 (fees 4 000 000: the refund's budget exactly).
    assert.deepEqual(booked.rows.get('refund'), { sent: 496_000_000n, fee: 4_000_000n, carried: false });
    // The fees took 1 000 000 more than the refund left: the carried shares pay it, no fee below zero.
    const short = bookClosing({
      ...refundClosing,
      total: 5_000_000n,
      out: [
        { destination: customer, value: 496_000_000n },
        { destination: treasury, value: 6_000_000n },
      ],
      skipped: 1,
      late: { customer: 0n, kassa: 0n },
    })!;
    assert.deepEqual(short.rows.get('refund'), { sent: 496_000_000n, fee: 4_000_000n, carried: false });
    const carried = [...short.rows.values()].filter((r) => r.carried);
    assert.equal(
      carried.reduce((sum, r) => sum + r.sent, 0n),
      6_000_000n,
    );
    assert.equal(
      carried.reduce((sum, r) => sum + r.fee, 0n),
      1_000_000n,
    );
    assert.ok([...short.rows.values()].every((r) => r.fee >= 0n && r.sent >= 0n));
    // The action phase counted another skip than the messages show: not what was signed.
    assert.equal(
      bookClosing({
        ...refundClosing,
        out: [
          { destination: customer, value: 496_000_000n },
          { destination: treasury, value: 7_000_000n },
        ],
        skipped: 0,
        late: { customer: 0n, kassa: 0n },
      }),
      undefined,
    );
  });
  it("the final sweep: the largest share carries the rest; the customer's dust goes to the treasury only then; nothing worth a message is nothing", () => {
    const treasury = `0:${'a'.repeat(64)}`;
    const gasWallet = `0:${'b'.repeat(64)}`;
    assert.deepEqual(finalSweep({ customer: 4_000_000n, merchant: 6_000_000n, gas: 0n, treasury, gasWallet }), {
      reason: 'leftover',
      to: treasury,
      amount: 6_000_000n,
    });
    assert.deepEqual(finalSweep({ customer: 0n, merchant: 0n, gas: 9_000_000n, treasury, gasWallet }), {
      reason: 'gas_return',
      to: gasWallet,
      amount: 9_000_000n,
    });
    assert.equal(finalSweep({ customer: 0n, merchant: 0n, gas: 0n, treasury, gasWallet }), null);
    assert.equal(finalSweep({ customer: 1_000_000n, merchant: 2_500_000n, gas: 0n, treasury, gasWallet }), null, 'less than its message costs');
    assert.equal(finalSweep({ customer: 5_000_000n, merchant: 0n, gas: 0n, treasury: null, gasWallet }), null, 'nowhere to go');
    // The customer's dust rides with a final sweep, never beside a refund or a sale's sweep.
    const base = {
      primary: 6_000_000n,
      balance: 10_000_000n,
      paymentSettled: true,
      customerLeft: 4_000_000n,
      merchant: 0n,
      gas: 0n,
      gasFree: 0n,
      otherMoney: false,
      treasury,
      gasWallet,
    };
    assert.deepEqual(
      closingShares({ ...base, final: true })?.map((s) => [s.reason, s.amount, s.sent]),
      [['held_money', 4_000_000n, true]],
    );
    assert.equal(closingShares({ ...base, final: false }), null);
    assert.equal(
      closingShares({ ...base, final: true, primary: CLOSING_PRIMARY_MINIMUM - 1n, balance: CLOSING_PRIMARY_MINIMUM - 1n + 4_000_000n }),
      null,
      'the primary could not pay its message',
    );
  });
});
