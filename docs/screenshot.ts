// Makes docs/dashboard.png, the README's picture of the dashboard: a sandbox Kassa (`kassa start`,
// TON_NETWORK=sandbox, its own fresh database `kassa_screenshot` on the server of DATABASE_URL, else
// the embedded PostgreSQL), a store made and an owner invited with the CLI, a few payments made with
// the API and paid with sandbox transfers, then the payments page in Chromium (playwright-core,
// Debian's chromium or CHROMIUM_PATH) at 1100 × 720.
//
//   node docs/screenshot.ts
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { openBenchDatabase } from '../bench/lib/database.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'src/cli.ts');
const OUT = path.join(ROOT, 'docs/dashboard.png');
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
    return response.json() as Promise<{ id: string; status: string; paymentDetails: { address: string } }>;
  };
  // Oldest first: some paid in full, one overpaid, one in part, one cancelled, the newest still open.
  const orders: Array<[string, string, string, string | null]> = [
    ['A-1001', '12.00', 'TON', '12'],
    ['A-1002', '4.50', 'TON', '4.5'],
    ['A-1003', '25.00', 'USDT', '25'],
    ['A-1004', '8.00', 'TON', '9'],
    ['A-1005', '3.20', 'TON', '1'],
    ['A-1006', '15.00', 'USDT', null],
    ['A-1007', '6.75', 'TON', '6.75'],
    ['A-1008', '19.90', 'USDT', null],
  ];
  const paid: string[] = [];
  for (const [order, amount, coin, pay] of orders) {
    const payment = await api('POST', '/v1/payments', {
      amount,
      currency: coin,
      order_id: order,
      description: `Order ${order}`,
      payment_options: { methods: [{ coin, chain: 'TON' }] },
    });
    if (order === 'A-1006') await api('POST', `/v1/payments/${payment.id}/cancel`);
    if (pay) {
      await api('POST', '/sandbox/v1/transfers', { to: payment.paymentDetails.address, coin, amount: pay });
      if (pay === amount.replace(/\.?0+$/, '') || Number(pay) >= Number(amount)) paid.push(payment.id);
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
  const invitation = kassa('dashboard', 'invite', '--store', store.id!, '--email', 'owner@bluebottle.example', '--role', 'owner');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 }, colorScheme: 'light', locale: 'en-US' });
    await page.goto(`${url}${new URL(invitation.url!).pathname}`);
    await page.fill('#password', 'a long screenshot password');
    await page.fill('#confirm', 'a long screenshot password');
    await Promise.all([page.waitForURL(/\/payments$/), page.click('button[type=submit]')]);
    await page.screenshot({ path: OUT });
  } finally {
    await browser.close();
  }
  process.stdout.write(`${path.relative(ROOT, OUT)}: ${fs.statSync(OUT).size} bytes\n`);
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  await database.close(false);
  fs.rmSync(work, { recursive: true, force: true });
}
