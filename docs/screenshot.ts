// Makes the README's pictures of the dashboard: a sandbox Kassa (`kassa start`, TON_NETWORK=sandbox,
// its own fresh database `kassa_screenshot` on the server of DATABASE_URL, else the embedded
// PostgreSQL), a store made and an owner invited with the CLI, a few payments made with the API
// (priced in USD, EUR and in coins) and paid with sandbox transfers, then in Chromium
// (playwright-core, Debian's chromium or CHROMIUM_PATH): the store's home page
// (docs/dashboard-home.png, 1100 px wide, the whole page), the payments page (docs/dashboard.png,
// 1100 × 720), an overpaid payment's page (docs/dashboard-payment.png, the whole page), the Money
// page with its money for refund fees (docs/dashboard-money.png, the whole page) and the home
// page on a phone (docs/dashboard-phone.png, 375 × 812); then a shop's own page on another local
// origin, listed in the store's embedOrigins, with `<kassa-pay payment="…">` for an open payment
// (docs/kassa-pay.png: the element, on a page 480 px wide).
//
//   node docs/screenshot.ts
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { openBenchDatabase } from '../bench/lib/database.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'src/cli.ts');
const OUT = (name: string) => path.join(ROOT, 'docs', name);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-screenshot-'));
const database = await openBenchDatabase('kassa_screenshot', ROOT, pino({ level: 'warn' }));
await database.fresh();
const env = { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, TON_NETWORK: 'sandbox', LOG_LEVEL: 'warn', PORT: '0' };

/** A `kassa` command's JSON answer. */
function kassa(...args: string[]): Record<string, string> {
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd: work, env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kassa ${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// The shop's own page (docs/kassa-pay.png): its order and Kassa's element, and a CSP that allows
// nothing else from Kassa (docs/API.md, "The drop-in element"). Kassa's checkout URL is known once it runs.
let kassaCheckout = '';
const shop = http.createServer((req, res) => {
  const id = (new URL(req.url ?? '/', 'http://shop').searchParams.get('payment') ?? '').replace(/[^0-9a-f-]/gi, '');
  const origin = new URL(kassaCheckout).origin;
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': `default-src 'none'; script-src ${origin}; connect-src ${origin}; frame-src ${origin}; style-src 'self'; base-uri 'none'`,
  });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Blue Bottle Café: your order</title>
<script type="module" src="${kassaCheckout}/v1/kassa-pay.js"></script></head>
<body><main><h1>Your order</h1><p>Order A-1009: two flat whites and a croissant.</p>
<kassa-pay payment="${id}"></kassa-pay></main></body></html>`);
});
await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));

const service = spawn(process.execPath, [CLI, 'start'], { cwd: work, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    service.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const started = /\{[^\n]*"msg":"kassa started"[^\n]*\}/.exec(text);
      if (started) resolve(JSON.parse(started[0]).url);
    });
    service.once('exit', (code) => reject(new Error(`kassa start exited (${code})`)));
  });
  const store = kassa('store', 'create', '--name', 'Blue Bottle Café', '--methods', 'TON/TON,USDT/TON');
  kassa('store', 'update', store.id!, '--display-name', 'Blue Bottle Café', '--accent-color', '#1f5fa8');
  const { token } = kassa('token', 'issue', '--store', store.id!);
  const api = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<{ id: string; status: string; paymentDetails: { address: string; coinAmount: string } }>;
  };
  // Oldest first: some paid in full, one overpaid, one in part, one cancelled, the newest still open.
  // [order, price, its currency, the coin paid, what is paid: 'all', 'over' (10% more), 'part' (a third), or nothing].
  const orders: Array<[string, string, string, string, 'all' | 'over' | 'part' | null]> = [
    ['A-1001', '12.00', 'USD', 'TON', 'all'],
    ['A-1002', '4.50', 'EUR', 'TON', 'all'],
    ['A-1003', '25.00', 'USD', 'USDT', 'all'],
    ['A-1004', '8.00', 'USD', 'TON', 'over'],
    ['A-1005', '3.20', 'EUR', 'TON', 'part'],
    ['A-1006', '15.00', 'USD', 'USDT', null],
    ['A-1007', '2', 'TON', 'TON', 'all'],
    ['A-1008', '19.90', 'EUR', 'USDT', null],
  ];
  const paid: string[] = [];
  let overpaid = '';
  for (const [order, amount, currency, coin, pay] of orders) {
    const payment = await api('POST', '/v1/payments', {
      amount,
      currency,
      order_id: order,
      description: `Order ${order}`,
      payment_options: { methods: [{ coin, chain: 'TON' }] },
    });
    if (order === 'A-1006') await api('POST', `/v1/payments/${payment.id}/cancel`);
    if (pay) {
      const due = Number(payment.paymentDetails.coinAmount);
      const amountPaid = pay === 'all' ? payment.paymentDetails.coinAmount : (pay === 'over' ? due * 1.1 : due / 3).toFixed(coin === 'TON' ? 4 : 2);
      await api('POST', '/sandbox/v1/transfers', { to: payment.paymentDetails.address, coin, amount: amountPaid });
      if (pay !== 'part') paid.push(payment.id);
      if (pay === 'over') overpaid = payment.id;
    }
  }
  // The chain reader counts the transfers.
  for (const id of paid) {
    for (let i = 0; ; i += 1) {
      if ((await api('GET', `/v1/payments/${id}/status`)).status === 'completed') break;
      if (i > 120) throw new Error(`payment ${id} did not complete`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  kassaCheckout = `${url}/pay`;
  const invitation = kassa('dashboard', 'invite', '--store', store.id!, '--email', 'owner@bluebottle.example', '--role', 'owner');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1100, height: 720 }, colorScheme: 'light', locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${url}${new URL(invitation.url!).pathname}`);
    await page.fill('#password', 'a long screenshot password');
    await page.fill('#confirm', 'a long screenshot password');
    await Promise.all([page.waitForURL(new RegExp(`/stores/${store.id}$`)), page.click('button[type=submit]')]);
    const home = page.url();
    await page.screenshot({ path: OUT('dashboard-home.png'), fullPage: true });
    await page.goto(`${home}/payments`);
    await page.screenshot({ path: OUT('dashboard.png') });
    await page.goto(`${home}/payments/${overpaid}`);
    await page.screenshot({ path: OUT('dashboard-payment.png'), fullPage: true });
    await page.goto(`${home}/money`);
    await page.screenshot({ path: OUT('dashboard-money.png'), fullPage: true });
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(home);
    await page.screenshot({ path: OUT('dashboard-phone.png') });

    // <kassa-pay> on the shop's own page (its origin listed for the store), under the CSP docs/API.md gives it.
    const shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    kassa('store', 'update', store.id!, '--embed-origins', shopOrigin);
    const order = await api('POST', '/v1/payments', {
      amount: '6.40',
      currency: 'USD',
      order_id: 'A-1009',
      description: 'Two flat whites and a croissant',
      payment_options: { methods: [{ coin: 'TON', chain: 'TON' }] },
    });
    const shopPage = await browser.newPage({ viewport: { width: 480, height: 900 }, colorScheme: 'light', locale: 'en-US' });
    await shopPage.goto(`${shopOrigin}/?payment=${order.id}`);
    await shopPage.locator('kassa-pay .status[data-status="pending"]').waitFor({ timeout: 30_000 });
    await shopPage.frameLocator('kassa-pay iframe').locator('svg.qr').waitFor({ timeout: 30_000 });
    await shopPage.locator('kassa-pay').screenshot({ path: OUT('kassa-pay.png') });
  } finally {
    await browser.close();
  }
  for (const name of ['dashboard-home.png', 'dashboard.png', 'dashboard-payment.png', 'dashboard-money.png', 'dashboard-phone.png', 'kassa-pay.png']) {
    process.stdout.write(`docs/${name}: ${fs.statSync(OUT(name)).size} bytes\n`);
  }
} finally {
  shop.close();
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  await database.close(false);
  fs.rmSync(work, { recursive: true, force: true });
}
