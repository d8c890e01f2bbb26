// Who paid in the Telegram Mini App (issue 48 item 8; docs/API.md, Telegram Mini App): `telegramUser`
// is the Telegram user who had opened the payment when the paying transfer was made (on chain), not
// whoever opened it last — someone who opens it after the customer sent the money (before the chain
// reader books it) is kept among its openings but never named as the payer. On the sandbox chain.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, z } from '../../src/db/pool.ts';
import { updateStore } from '../../src/stores/stores.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';
import { signInitData, telegramKeys } from '../helpers/telegram.ts';

const BOT_ID = 7_000_000_002;
const keys = telegramKeys();
let app: ChainTestApp;
let token: string;

before(async () => {
  app = await startChainApp({ TELEGRAM_PUBLIC_KEY: keys.publicKeyHex });
  const store = await app.store({ methods: 'TON/TON' });
  token = store.token;
  await updateStore(app.pool, store.id, { 'telegram-bot': '@KassaPayerBot', 'telegram-app': 'pay', 'telegram-bot-id': String(BOT_ID) });
});
after(() => app.close());

const open = async (paymentId: string, user: { id: number; username: string }) => {
  const response = await app.request('POST', `/pay/v1/checkout/payments/${paymentId}/telegram`, {
    body: { initData: signInitData(keys, { botId: BOT_ID, user, startParam: paymentId }) },
  });
  assert.equal(response.status, 200, response.text);
};

describe('telegramUser', () => {
  it('is who had opened the payment when the paying transfer was made, not someone who opened it after the money was sent', async () => {
    const created = await app.request('POST', '/v1/payments', {
      token,
      body: { amount: '0.5', currency: 'TON', payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] } },
    });
    assert.equal(created.status, 201, created.text);
    const payment = created.json;
    const payer = { id: 111_111, username: 'payer' };
    const latecomer = { id: 222_222, username: 'latecomer' };
    await open(payment.id, payer);
    await app.pay(payment.paymentDetails.address, 'TON', '0.5');
    // Someone else opens it after the money was sent, before the reader books it.
    app.clock.set(new Date(Date.now() + 120_000));
    try {
      await open(payment.id, latecomer);
    } finally {
      app.clock.real();
    }
    // While it is open, the payment names the last opening so far.
    assert.deepEqual((await app.request('GET', `/v1/payments/${payment.id}`, { token })).json.telegramUser, { id: latecomer.id, username: 'latecomer' });
    await app.settle();
    const paid = (await app.request('GET', `/v1/payments/${payment.id}`, { token })).json;
    assert.equal(paid.status, 'completed');
    assert.deepEqual(paid.telegramUser, { id: payer.id, username: 'payer' });
    const reported = await app.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      select telegram_user_id::text as id from reporting.telegram_payers where payment_id = ${payment.id}`);
    assert.equal(reported, String(payer.id));
    // Every opening is kept.
    const openings = await app.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      select telegram_user_id::text as id from payment_telegram_openings where payment_id = ${payment.id} order by opened_at`);
    assert.deepEqual(openings, [String(payer.id), String(latecomer.id)]);
  });
});
