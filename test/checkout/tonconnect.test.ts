// The TON Connect request the checkout hands to the customer's wallet (src/checkout/tonconnect.ts),
// for a payment settled to the store's treasury (CONTRACT §12): the transfer goes to the treasury and
// carries paymentDetails.payload — for TON as the message's body, for a jetton as the TEP-74
// transfer's forward_payload with a notification (forward_ton_amount > 0). A deposit payment's
// request carries no comment. Pure: a row as the checkout's query gives it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Address, Cell } from '@ton/core';
import { tonConnectRequest } from '../../src/checkout/tonconnect.ts';
import type { CheckoutRow } from '../../src/checkout/view.ts';
import { referencePayload } from '../../src/payments/reference.ts';

const treasury = Address.parse(`0:${'1'.repeat(64)}`);
const customer = Address.parse(`0:${'2'.repeat(64)}`);
const customerJettonWallet = Address.parse(`0:${'3'.repeat(64)}`);

function row(over: Partial<CheckoutRow>): CheckoutRow {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    store_id: '00000000-0000-4000-8000-000000000002',
    status: 'pending',
    amount: '2',
    currency: 'TON',
    description: null,
    return_url: null,
    coin_symbol: 'TON',
    coin_name: 'Toncoin',
    coin_decimals: 9,
    coin_kind: 'native',
    chain_symbol: 'TON',
    chain_name: 'TON',
    coin_amount: '2',
    address_friendly: treasury.toString({ bounceable: false }),
    reference: 'TWERX1SYX',
    created_at: new Date('2026-11-28T10:00:00Z'),
    expires_at: new Date('2026-11-28T11:00:00Z'),
    paid_at: null,
    transaction_hashes: [],
    received_base_units: '500000000',
    telegram_mini_app: null,
    store_name: 'Shop',
    store_logo_url: null,
    store_accent_color: null,
    jetton_master: null,
    exchange_rate: null,
    ...over,
  } as CheckoutRow;
}

const usdt = { coin_symbol: 'USDT', coin_kind: 'jetton', coin_decimals: 6, coin_amount: '3', received_base_units: '0' } as const;

describe('the TON Connect request of a payment settled to the treasury', () => {
  it('TON: what is still due, to the treasury, its body the payload (the reference as a text comment)', () => {
    const request = tonConnectRequest({ row: row({}), network: 'sandbox', customer, customerJettonWallet: null, queryId: 1n });
    assert.ok(request);
    assert.equal(request.messages.length, 1);
    const [message] = request.messages;
    assert.ok(Address.parse(message!.address).equals(treasury));
    assert.equal(message!.amount, '1500000000');
    assert.equal(message!.payload, referencePayload('TWERX1SYX'));
    const body = Cell.fromBase64(message!.payload!).beginParse();
    assert.equal(body.loadUint(32), 0);
    assert.equal(body.loadStringTail(), 'TWER-X1SYX');
  });

  it('a jetton: a TEP-74 transfer to the treasury whose forward_payload is the comment, with a notification', () => {
    const request = tonConnectRequest({ row: row(usdt), network: 'sandbox', customer, customerJettonWallet, queryId: 7n });
    assert.ok(request);
    const [message] = request.messages;
    assert.ok(Address.parse(message!.address).equals(customerJettonWallet), "sent to the customer's own jetton wallet");
    const body = Cell.fromBase64(message!.payload!).beginParse();
    assert.equal(body.loadUint(32), 0x0f8a7ea5);
    assert.equal(body.loadUintBig(64), 7n);
    assert.equal(body.loadCoins(), 3_000_000n);
    assert.ok(body.loadAddress().equals(treasury), 'destination: the treasury');
    assert.ok(body.loadAddress().equals(customer), 'the excess back to the customer');
    assert.equal(body.loadBit(), false, 'no custom payload');
    assert.ok(body.loadCoins() > 0n, 'forward_ton_amount > 0: the treasury is notified');
    const forward = body.loadMaybeRef();
    assert.ok(forward, 'forward_payload in a ref');
    assert.equal(forward.toBoc().toString('base64'), referencePayload('TWERX1SYX'));
  });

  it('a deposit payment: no comment at all', () => {
    const request = tonConnectRequest({ row: row({ reference: null }), network: 'sandbox', customer, customerJettonWallet: null, queryId: 1n });
    assert.equal(request?.messages[0]?.payload, undefined);
    const jetton = tonConnectRequest({ row: row({ ...usdt, reference: null }), network: 'sandbox', customer, customerJettonWallet, queryId: 1n });
    const body = Cell.fromBase64(jetton!.messages[0]!.payload!).beginParse();
    body.skip(32 + 64);
    body.loadCoins();
    body.loadAddress();
    body.loadAddress();
    body.loadBit();
    body.loadCoins();
    assert.equal(body.loadMaybeRef(), null);
  });
});
