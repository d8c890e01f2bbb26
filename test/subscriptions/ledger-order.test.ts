// A subscription's ledger in the order it was written (records.ts inLedgerOrder): rows of one
// transaction share their time and a random id, so within one time the balances chain them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inLedgerOrder, type LedgerRow } from '../../src/subscriptions/records.ts';

const row = (id: string, at: number, kind: LedgerRow['kind'], amount: string, balanceAfter: string): LedgerRow => ({
  id,
  kind,
  amount,
  currency: 'TON',
  balance_after: balanceAfter,
  period_start: null,
  period_end: null,
  payment_id: null,
  actor: 'kassa',
  note: null,
  created_at: new Date(at),
});

describe('inLedgerOrder', () => {
  it('orders the rows of one time by their balances, whatever their ids', () => {
    // A credit of 4 then two charges of 2 in one transaction, then a credit of 2 and a charge at a later time; ids sort them otherwise.
    const written = [
      row('f', 1, 'adjustment', '4', '4'),
      row('e', 1, 'charge', '-2', '2'),
      row('d', 1, 'charge', '-2', '0'),
      row('c', 2, 'adjustment', '2.0', '2'),
      row('b', 2, 'charge', '-2', '0'),
    ];
    const byId = [...written].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
    assert.deepEqual(
      inLedgerOrder(byId).map((r) => r.id),
      ['f', 'e', 'd', 'c', 'b'],
    );
  });

  it('keeps rows it cannot chain (a broken balance) in the order given', () => {
    const rows = [row('a', 1, 'credit', '1', '5'), row('b', 1, 'credit', '1', '9')];
    assert.deepEqual(
      inLedgerOrder(rows).map((r) => r.id),
      ['a', 'b'],
    );
  });
});
