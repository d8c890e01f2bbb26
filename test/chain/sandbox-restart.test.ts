// The sandbox chain survives a restart (issue 32): its state is kept beside the books
// (sandbox_chain_epochs) and loaded at the next start, so after a restart every deposit holds what
// its books say and reconciliation finds no difference. A chain started afresh on books that had
// one is a new epoch, said once; reconciliation leaves the deposits of the old chain out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Address } from '@ton/core';
import { pino } from 'pino';
import { createChainClient } from '../../src/chain/client.ts';
import { startSandboxServer, type SandboxServer } from '../../src/chain/sandbox/index.ts';
import { sql, z } from '../../src/db/pool.ts';
import { startSandbox, type Sandbox } from '../../src/http/routes/sandbox.ts';
import { reconcileDeposits } from '../../src/treasury/reconcile.ts';
import { startChainApp, type ChainTestApp } from '../helpers/chain.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
let app: ChainTestApp;
const started: Array<{ sandbox: Sandbox; server: SandboxServer }> = [];

before(async () => {
  app = await startChainApp();
});
after(async () => {
  for (const { sandbox, server } of started) {
    await sandbox.stop();
    await server.close();
  }
  await app.close();
});

/** `kassa start` again on the same database: the sandbox as it starts, served for the chain client. */
async function restart(): Promise<{ sandbox: Sandbox; server: SandboxServer }> {
  const sandbox = await startSandbox(app.pool, log, { blockClock: false, fund: [] });
  const server = await startSandboxServer({ port: 0, chain: sandbox.chain });
  started.push({ sandbox, server });
  return { sandbox, server };
}

const epochs = () =>
  app.pool.any(
    sql.type(z.object({ epoch: z.number(), reset: z.boolean(), reason: z.string() }))`select epoch, reset, reason from sandbox_chain_epochs order by epoch`,
  );
const reconcile = (server: SandboxServer) =>
  reconcileDeposits({ pool: app.pool, client: createChainClient({ endpoint: server.url }), log, now: () => new Date() });

describe('the sandbox chain across restarts', () => {
  it('after a restart every deposit holds what its books say (no difference); a reset is one new epoch, and its old deposits are left out', async () => {
    const store = await app.store({ methods: 'TON/TON,USDT/TON' });
    const addresses: string[] = [];
    for (const coin of ['TON', 'USDT']) {
      const created = await app.request('POST', '/v1/payments', {
        token: store.token,
        body: { amount: '3', currency: coin, payment_options: { methods: [{ coin, chain: 'TON' }] } },
      });
      assert.equal(created.status, 201, created.text);
      addresses.push(created.json.paymentDetails.address);
      await app.pay(created.json.paymentDetails.address, coin, '2'); // underpaid: the money stays in the deposit
    }
    await app.settle();
    await app.advanceChain(2);
    const before = await Promise.all(addresses.map((address) => app.sandbox.chain.balancesOf(Address.parse(address))));
    assert.deepEqual(
      before.map((balances) => [balances.TON !== '0', balances.USDT]),
      [
        [true, '0'],
        [true, '2'],
      ],
    );
    assert.deepEqual(await epochs(), [{ epoch: 1, reset: false, reason: 'first start' }]);

    // Stopped (its state saved beside the books), then started again on the same database.
    await app.stopReader();
    await app.sandbox.stop();
    const { sandbox, server } = await restart();
    assert.deepEqual(await Promise.all(addresses.map((address) => sandbox.chain.balancesOf(Address.parse(address)))), before);
    assert.equal(
      sandbox.chain.transactionsOf(Address.parse(addresses[0]!)).length,
      app.sandbox.chain.transactionsOf(Address.parse(addresses[0]!)).length,
      'its history too',
    );
    assert.deepEqual(await reconcile(server), [], 'books and chain agree after the restart');
    const checked = await app.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deposit_reconciliations where difference_base_units = 0`,
    );
    assert.ok(checked >= 3, `both deposits were compared (TON, and USDT with its TON): ${checked}`);
    assert.equal((await epochs()).length, 1, 'the same chain: no new epoch');
    // It goes on: a transfer on the loaded chain is a new transaction after the old ones.
    const next = await sandbox.chain.transfer({ to: addresses[0]!, coin: 'TON', amount: '0.5' });
    assert.ok(BigInt(next.lt) > sandbox.chain.transactionsOf(Address.parse(addresses[0]!)).at(-2)!.lt);

    // The saved state is lost: the chain starts afresh, once, as a new epoch; reconciliation does
    // not report the old deposits' money as missing.
    await sandbox.stop();
    await app.pool.query(sql.unsafe`update sandbox_chain_epochs set state = null, saved_at = null`);
    const fresh = await restart();
    assert.deepEqual(
      (await epochs()).map((row) => [row.epoch, row.reset, row.reason.split(' (')[0]]),
      [
        [1, false, 'first start'],
        [2, true, 'reset: no state was saved'],
      ],
    );
    assert.deepEqual(await fresh.sandbox.chain.balancesOf(Address.parse(addresses[1]!)), { ...before[1], TON: '0', USDT: '0' });
    assert.deepEqual(await reconcile(fresh.server), [], 'the old chain’s deposits are left out');
    await fresh.sandbox.stop();
    await restart();
    assert.equal((await epochs()).length, 2, 'said once: the next start loads the new epoch');
  });
});
