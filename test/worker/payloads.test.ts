// Task payload checks (src/worker/payloads.ts): payloads can come from older code, so a task drops
// one it cannot read instead of failing forever.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { rawAddressField, uuidField } from '../../src/worker/payloads.ts';
import type { WorkerDeps } from '../../src/worker/deps.ts';
import outgoingSend from '../../tasks/outgoing__send.ts';

const WALLET = `0:${'ab'.repeat(32)}`;

describe('task payloads', () => {
  it('uuidField: a UUID, lower-cased; null for anything else', () => {
    const id = '0B7F6D2E-8C1A-4E5B-9F3D-2A6C8E4B1D7F';
    assert.equal(uuidField({ deliveryId: id }, 'deliveryId'), id.toLowerCase());
    for (const payload of [null, 'x', 42, [], {}, { deliveryId: 'nope' }, { deliveryId: 7 }, { other: id }])
      assert.equal(uuidField(payload, 'deliveryId'), null);
  });

  it('rawAddressField: a stored raw address; null for a friendly form, upper-case hex or anything else', () => {
    assert.equal(rawAddressField({ wallet: WALLET }, 'wallet'), WALLET);
    assert.equal(rawAddressField({ wallet: `-1:${'0'.repeat(64)}` }, 'wallet'), `-1:${'0'.repeat(64)}`);
    for (const wallet of [undefined, null, 5, '', 'EQAbc', `0:${'AB'.repeat(32)}`, `0:${'ab'.repeat(31)}`, `${WALLET} `, `x:${'ab'.repeat(32)}`])
      assert.equal(rawAddressField({ wallet }, 'wallet'), null, String(wallet));
    assert.equal(rawAddressField(null, 'wallet'), null);
  });

  it('outgoing__send drops a payload without a wallet address (logged), before needing the chain', async () => {
    const errors: string[] = [];
    const deps = { log: pino({ level: 'silent' }), now: () => new Date() } as unknown as WorkerDeps;
    const task = outgoingSend(deps);
    const helpers = { logger: { error: (line: string) => errors.push(line) }, job: { id: '1' } } as never;
    await task({ wallet: 'EQ-not-raw' }, helpers);
    await task(null, helpers);
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /outgoing__send: payload without a wallet address, dropped: \{"wallet":"EQ-not-raw"\}/);
    // A readable payload goes on (and, with no chain client here, says so).
    await assert.rejects(task({ wallet: WALLET }, helpers), /needs the chain API client/);
  });
});
