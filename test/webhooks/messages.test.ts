// A notification's words (issue 47 item 7): each event a member may be told of reads in the shop's
// words, with amounts in the coin's name (Gram (GRAM) for TON), and no raw event name or jargon.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notificationMessage } from '../../src/webhooks/messages.ts';

const PAYMENT = '0b0f4a4e-2f54-4a9e-9d1c-5b8f1f0f7a11';

describe('notification messages', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'payment.completed',
      { paymentID: PAYMENT, amount: '12.5', currency: 'USD', order_id: 'A-17' },
      /A payment of 12\.5 USD to Corner Café is paid in full\.\nOrder: A-17/,
    ],
    ['refund.confirmed', { paymentID: PAYMENT, amount: '0.3', coin: 'TON' }, /A refund of 0\.3 Gram \(GRAM\) from Corner Café reached the customer's wallet\./],
    [
      'refund.failed',
      { paymentID: PAYMENT, amount: '5', coin: 'USDT', failureKind: 'transient', failureReason: 'the network did not take it' },
      /could not be sent\.\nWhy: the network did not take it\nKassa tries it again by itself\./,
    ],
    [
      'payment.money_received',
      { paymentID: PAYMENT, transfer: { amount: '0.2', coin: 'TON', effect: 'after_cancel' } },
      /0\.2 Gram \(GRAM\) reached Corner Café for a payment that had been cancelled\./,
    ],
    ['money.unmatched', { amount: '1', coin: 'TON' }, /1 Gram \(GRAM\) reached Corner Café without matching a payment\./],
    [
      'sweep.failed',
      { paymentID: PAYMENT, amount: '2', coin: 'TON', failureReason: 'not enough to pay the network fee' },
      /Moving 2 Gram \(GRAM\) of Corner Café's money to your wallet failed\./,
    ],
    [
      'subscription.past_due',
      {
        subscription: {
          id: 'b1f0c2d3-0000-4000-8000-000000000001',
          status: 'past_due',
          credit: '0.5',
          customer: { reference: 'user-1042' },
          portalURL: 'https://pay.example/s/SECRET-PORTAL-TOKEN',
        },
      },
      /The subscription of user-1042 at Corner Café is past due: its credit \(0\.5\) did not cover the next period\./,
    ],
  ];
  for (const [event, payload, words] of cases) {
    it(`${event}: in the shop's words, with the payment and its link`, () => {
      const message = notificationMessage(
        event,
        payload,
        'Corner Café',
        payload.paymentID ? `https://pay.example/dashboard/stores/s/payments/${PAYMENT}` : null,
      );
      assert.match(message.text, words);
      assert.doesNotMatch(message.text, /SECRET-PORTAL-TOKEN/, "never the subscriber's portal link (a secret)");
      assert.ok(message.subject.startsWith('Corner Café · '));
      assert.doesNotMatch(`${message.subject}\n${message.text}`, /\b(jetton|gas|operator|basechain|payment\.|refund\.|sweep\.|money\.)\b|\bTON\b/i);
      if (payload.paymentID) assert.match(message.text, new RegExp(`Payment: ${PAYMENT}\\nhttps://pay\\.example/dashboard/stores/s/payments/${PAYMENT}$`));
    });
  }
});
