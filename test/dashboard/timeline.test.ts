// A payment's timeline (dashboard/money.ts paymentTimeline, pure) and its rendering on the
// payment's page: the story's order within a second (chain time has whole seconds), each transfer
// out planned then confirmed or failed, and explorer links for transactions on a real network.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paymentTimeline } from '../../src/dashboard/money.ts';
import { paymentPage, treasuryFlags } from '../../src/dashboard/paymentPage.ts';
import type { PaymentPage } from '../../src/dashboard/payments.ts';

const at = (iso: string) => new Date(iso);
const HASH_IN = 'a'.repeat(64);
const HASH_OUT = 'b'.repeat(64);

const payment = {
  created_at: at('2026-11-20T10:00:00.700Z'),
  method_selected_at: at('2026-11-20T10:00:00.700Z'),
  // Completed at the chain time of the transfer that paid it: the same whole second.
  paid_at: at('2026-11-20T10:00:00Z'),
  coin_symbol: 'TON',
  coin_amount: '1',
  chain_symbol: 'TON',
};
const transfer = {
  hash: HASH_IN,
  amount: '1.5',
  amount_base_units: '1500000000',
  coin_symbol: 'TON',
  effect: 'overpaid',
  chain_time: at('2026-11-20T10:00:00Z'),
};
const refund = {
  id: 'r1',
  kind: 'refund',
  amount: '0.2',
  coin_symbol: 'TON',
  fee: '0.00588',
  transaction_hash: HASH_OUT,
  failure_reason: null,
  created_at: at('2026-11-20T11:00:00Z'),
};
const sweep = {
  id: 's1',
  kind: 'sweep',
  amount: '1',
  coin_symbol: 'TON',
  fee: null,
  transaction_hash: null,
  failure_reason: 'bounced',
  created_at: at('2026-11-20T10:30:00Z'),
};

const timeline = () =>
  paymentTimeline({
    payment,
    expiredAt: null,
    cancelledAt: null,
    transfers: [transfer] as never,
    outgoing: [sweep, refund] as never,
    outgoingTimes: new Map([
      ['r1', { confirmed_at: at('2026-11-20T11:00:05Z'), failed_at: null }],
      ['s1', { confirmed_at: null, failed_at: at('2026-11-20T10:31:00Z') }],
    ]),
  });

describe('a payment’s timeline', () => {
  it('tells the story in time order; within one second in the story’s order', () => {
    assert.deepEqual(
      timeline().map((e) => [e.kind, e.text]),
      [
        ['created', 'Created'],
        ['method', 'Method chosen: Gram (GRAM) on the TON network: 1 GRAM to pay'],
        ['transfer', 'Received 1.5 GRAM: paid more than the price (the extra can be refunded)'],
        ['completed', 'Completed'],
        ['sweep', 'Move to your wallet of 1 GRAM planned'],
        ['sweep', 'Move to your wallet of 1 GRAM failed: bounced'],
        ['refund', 'Refund of 0.2 GRAM planned'],
        ['refund', 'Refund of 0.2 GRAM done (network fee 0.0059 GRAM)'],
      ],
    );
    assert.deepEqual(
      timeline()
        .filter((e) => e.hash)
        .map((e) => e.hash),
      [HASH_IN, HASH_OUT],
    );
  });

  it('the payment page links each transaction of the timeline to the explorers of its network', () => {
    const page = {
      payment: {
        ...payment,
        id: '0b6c1a52-4f7e-4f0e-9c1e-2d3b4a5c6d7e',
        status: 'completed',
        amount: '1',
        currency: 'TON',
        expires_at: at('2026-11-20T11:00:00Z'),
        sale_refunded_base_units: '0',
      },
      received: '1.5',
      anomalies: ['overpaid'],
      transfers: [],
      outgoing: [],
      refundable: [],
      treasuryRefundable: null,
      payer: null,
      money: [],
      timeline: timeline(),
      deliveries: [],
      network: 'mainnet',
    } as unknown as PaymentPage;
    const html = paymentPage({
      root: '/dashboard',
      viewer: { email: 'a@example.com', memberships: [] },
      store: { id: '5f0c7a3e-1b2d-4c5e-8f9a-0b1c2d3e4f50', name: 'Shop', role: 'viewer' },
      page,
      checkoutUrl: 'https://pay.example.com/pay/x',
    });
    const list = html.slice(html.indexOf('id="timeline"'), html.indexOf('</ol>'));
    for (const hash of [HASH_IN, HASH_OUT]) {
      assert.ok(list.includes(`https://tonviewer.com/transaction/${hash}`), hash);
      assert.ok(list.includes(`https://tonscan.org/tx/${hash}`), hash);
    }
  });

  it('a refund from the treasury says in the books what the chain did beside the request: paid again, refunded twice, another amount, another account', () => {
    const row: Parameters<typeof treasuryFlags>[0] = {
      source: 'treasury',
      coin_symbol: 'TON',
      amount: '0.3',
      paid_again: [],
      beyond_sale: null,
      asked_amount: null,
      paid_from: null,
      expired_before_paid_at: null,
    };
    assert.deepEqual(treasuryFlags(row), []);
    assert.deepEqual(treasuryFlags({ ...row, source: 'deposit', paid_from: '0:ab' }), []);
    assert.deepEqual(
      treasuryFlags({
        ...row,
        paid_again: [{ transactionHash: HASH_OUT, amount: '0.3' }],
        beyond_sale: '0.3',
        asked_amount: '1',
        paid_from: `0:${'c'.repeat(64)}`,
        expired_before_paid_at: new Date('2026-11-28T12:00:00Z'),
      }),
      [
        'Paid again: your wallet signed it twice, 0.3 GRAM more left the treasury.',
        'Refunded twice: 0.3 GRAM more than the sale left the treasury (an expired refund was asked again and the old one signed anyway).',
        'Paid after it had expired: your wallet signed an old request. Check you did not refund this money again.',
        'Signed for 0.3 GRAM, not the 1 GRAM asked.',
        'Paid from another account than the treasury.',
      ],
    );
  });
});
