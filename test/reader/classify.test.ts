// What the reader makes of a transaction, decided without a database or a chain (src/reader/classify.ts):
// the cases book.ts books a transaction as (casesOf), routing, the books' record of incoming TON and jettons, and jetton notifications once the reader
// has said who sent them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Address, beginCell, type Cell } from '@ton/core';
import {
  OP_ENCRYPTED_COMMENT,
  OP_JETTON_EXCESSES,
  OP_JETTON_INTERNAL_TRANSFER,
  OP_JETTON_TRANSFER_NOTIFICATION,
  OP_TEXT_COMMENT,
} from '../../src/chain/detect.ts';
import type { ChainMessage, ChainTransaction } from '../../src/chain/transactions.ts';
import {
  type BlockAccounts,
  bookComment,
  casesOf,
  classifyIncoming,
  classifyTreasuryIncoming,
  routeTransaction,
  type Watch,
} from '../../src/reader/classify.ts';
import type { TreasuryWatch } from '../../src/treasury/treasuryRefunds.ts';
import { checkCharacter } from '../../src/payments/reference.ts';

const raw = (digit: string): string => `0:${digit.repeat(64)}`;
const DEPOSIT = raw('d');
const JETTON_WALLET = raw('e');
const GAS = raw('9');
const CUSTOMER = raw('c');
const OTHER_WALLET = raw('f');
const MASTER = raw('a');

const depositWatch: Watch = { account: DEPOSIT, payment_id: 'p1', kind: 'deposit', coin_symbol: null, jetton_master: null, deposit_address: DEPOSIT };
const jettonWatch: Watch = {
  account: JETTON_WALLET,
  payment_id: 'p1',
  kind: 'jetton_wallet',
  coin_symbol: 'USDT',
  jetton_master: MASTER,
  deposit_address: DEPOSIT,
};

function tx(account: string, inMessage: Partial<ChainMessage> | null, overrides: Partial<ChainTransaction> = {}): ChainTransaction {
  return {
    account,
    lt: '1000',
    hash: 'ab'.repeat(32),
    now: 1_800_000_000,
    inMessage: inMessage === null ? null : { source: CUSTOMER, value: 1_500_000_000n, bounced: false, body: null, ...inMessage },
    aborted: false,
    compute: { skipped: false, success: true, exitCode: 0 },
    actionSuccess: true,
    bounce: null,
    totalFees: 123n,
    ...overrides,
  };
}

const comment = (text: string): Cell => beginCell().storeUint(OP_TEXT_COMMENT, 32).storeStringTail(text).endCell();
const notification = (amount: bigint, sender: string): Cell =>
  beginCell().storeUint(OP_JETTON_TRANSFER_NOTIFICATION, 32).storeUint(7, 64).storeCoins(amount).storeAddress(Address.parse(sender)).storeBit(0).endCell();
const internalTransfer = (amount: bigint, from: string): Cell =>
  beginCell()
    .storeUint(OP_JETTON_INTERNAL_TRANSFER, 32)
    .storeUint(7, 64)
    .storeCoins(amount)
    .storeAddress(Address.parse(from))
    .storeAddress(Address.parse(from))
    .storeCoins(1n)
    .storeBit(0)
    .endCell();

describe('bookComment', () => {
  it('keeps what PostgreSQL text can hold', () => {
    assert.equal(bookComment(undefined), null);
    assert.equal(bookComment('order #42 ✓'), 'order #42 ✓');
    assert.equal(bookComment('a\u0000b'), 'a\uFFFDb');
    assert.equal(bookComment('x'.repeat(5000))?.length, 1000);
  });
});

describe('casesOf: how book.ts books each transaction of a block', () => {
  const TREASURY = raw('7');
  const refund: TreasuryWatch = {
    id: 'r1',
    from_address: TREASURY,
    to_address: CUSTOMER,
    watch_account: TREASURY,
    coin_symbol: 'TON',
    amount_base_units: '1',
    reference: 'R',
  };
  const delivery = {
    id: 'o1',
    from_address: DEPOSIT,
    coin_symbol: 'USDT',
    jetton_wallet: JETTON_WALLET,
    destination_jetton_wallet: OTHER_WALLET,
    query_id: '7',
    amount_base_units: '1',
  };
  const settles = { stores: ['s1'], jetton: null };
  const accounts: BlockAccounts = {
    watches: new Map([
      [DEPOSIT, depositWatch],
      [JETTON_WALLET, jettonWatch],
    ]),
    treasuryRefunds: new Map([[TREASURY, [refund]]]),
    treasuries: new Map([
      [TREASURY, settles],
      [DEPOSIT, settles],
    ]),
    deliveries: new Map([[JETTON_WALLET, [delivery]]]),
    gasWallet: GAS,
  };
  const kinds = (t: ChainTransaction) => casesOf(t, accounts).map((c) => c.kind);

  it('one case a kind, the refund and the delivery beside any other; none for an account of nobody', () => {
    const table: [string, ChainTransaction, string[]][] = [
      ["a treasury's transaction: its refunds, then money into it by reference", tx(TREASURY, {}), ['treasuryRefund', 'treasuryPayment']],
      ['TON into the gas wallet from outside', tx(GAS, {}), ['gasArrival']],
      ["the gas wallet's external message: money out", tx(GAS, { source: null, value: 0n }), ['moneyOut']],
      ["a deposit's external message: money out, never a treasury's payment though it settles there", tx(DEPOSIT, { source: null, value: 0n }), ['moneyOut']],
      ['money into a deposit', tx(DEPOSIT, {}), ['moneyIn']],
      ["a deposit's jetton wallet on a transfer's way: the delivery, then money in", tx(JETTON_WALLET, { source: DEPOSIT }), ['jettonDelivery', 'moneyIn']],
      ["nobody's account", tx(raw('1'), {}), []],
    ];
    for (const [what, transaction, expected] of table) assert.deepEqual(kinds(transaction), expected, what);
    const [moneyIn] = casesOf(tx(JETTON_WALLET, { source: DEPOSIT }), accounts).slice(1);
    assert.deepEqual(moneyIn, { kind: 'moneyIn', watch: jettonWatch, jettonTransferOut: true, jettonTransferBack: null });
  });
});

describe('routeTransaction', () => {
  it("an external message on the gas wallet or a deposit is money out; on nobody's account, nothing", () => {
    assert.deepEqual(routeTransaction(tx(GAS, { source: null, value: 0n }), undefined, GAS), { kind: 'outgoing', paymentId: null });
    assert.deepEqual(routeTransaction(tx(DEPOSIT, { source: null, value: 0n }), depositWatch, GAS), { kind: 'outgoing', paymentId: 'p1' });
    assert.deepEqual(routeTransaction(tx(raw('1'), {}), undefined, GAS), { kind: 'ignored' });
    assert.deepEqual(routeTransaction(tx(GAS, {}), undefined, GAS), { kind: 'ignored' }, "TON into the gas wallet is no payment's");
  });

  it("a watched account's transactions are classified; the deposit's own jetton transfer out is marked", () => {
    assert.deepEqual(routeTransaction(tx(DEPOSIT, {}), depositWatch, null), {
      kind: 'watched',
      watch: depositWatch,
      jettonTransferOut: false,
      jettonTransferBack: null,
    });
    assert.deepEqual(routeTransaction(tx(JETTON_WALLET, { source: DEPOSIT }), jettonWatch, null), {
      kind: 'watched',
      watch: jettonWatch,
      jettonTransferOut: true,
      jettonTransferBack: null,
    });
    assert.deepEqual(routeTransaction(tx(JETTON_WALLET, { source: OTHER_WALLET }), jettonWatch, null), {
      kind: 'watched',
      watch: jettonWatch,
      jettonTransferOut: false,
      jettonTransferBack: null,
    });
  });

  it("an internal_transfer the destination refused, taken back by the deposit's jetton wallet, is marked with its query id and amount", () => {
    // The bounced body: 0xffffffff, then the start of what was sent.
    const back = beginCell().storeUint(0xffffffff, 32).storeSlice(internalTransfer(750_000n, DEPOSIT).beginParse()).endCell();
    const bounced = tx(JETTON_WALLET, { source: OTHER_WALLET, bounced: true, body: back, value: 1_000n });
    assert.deepEqual((routeTransaction(bounced, jettonWatch, null) as { jettonTransferBack: unknown }).jettonTransferBack, { queryId: 7n, amount: 750_000n });
    // Not taken back (the wallet's own transaction failed): the jettons did not come back.
    const notTaken = tx(JETTON_WALLET, { source: OTHER_WALLET, bounced: true, body: back }, { compute: { skipped: false, success: false, exitCode: 709 } });
    assert.equal((routeTransaction(notTaken, jettonWatch, null) as { jettonTransferBack: unknown }).jettonTransferBack, null);
    // A bounce of anything else (TON the deposit sent bounceable), or on the deposit itself: no.
    const tonBack = tx(DEPOSIT, { source: OTHER_WALLET, bounced: true, body: back });
    assert.equal((routeTransaction(tonBack, depositWatch, null) as { jettonTransferBack: unknown }).jettonTransferBack, null);
    const other = tx(JETTON_WALLET, { source: OTHER_WALLET, bounced: true, body: beginCell().storeUint(0xffffffff, 32).storeUint(0x7bdd97de, 32).endCell() });
    assert.equal((routeTransaction(other, jettonWatch, null) as { jettonTransferBack: unknown }).jettonTransferBack, null);
    // And it is no incoming transfer.
    assert.equal(classifyIncoming(jettonWatch, bounced, { gasWallet: GAS }), null);
  });
});

describe("classifyIncoming: a deposit's jetton wallet of another coin (reconciliation's)", () => {
  const other: Watch = { ...jettonWatch, coin_symbol: 'NOT', unnotifiedOnly: true };
  const withForward = (forward: bigint) =>
    beginCell()
      .storeUint(OP_JETTON_INTERNAL_TRANSFER, 32)
      .storeUint(7, 64)
      .storeCoins(3_000n)
      .storeAddress(Address.parse(CUSTOMER))
      .storeAddress(Address.parse(CUSTOMER))
      .storeCoins(forward)
      .storeBit(0)
      .endCell();
  it('books a transfer that sent no notification; one that did is booked from its notification', () => {
    const silent = classifyIncoming(other, tx(JETTON_WALLET, { source: OTHER_WALLET, body: withForward(0n) }), { gasWallet: GAS });
    assert.ok(silent !== null && !('needs' in silent));
    assert.equal(silent.coinSymbol, 'NOT');
    assert.equal(silent.amountBaseUnits, 3_000n);
    assert.equal(silent.credited && silent.payment, true);
    assert.equal(classifyIncoming(other, tx(JETTON_WALLET, { source: OTHER_WALLET, body: withForward(1n) }), { gasWallet: GAS }), null);
    // The payment's own coin's wallet books both.
    assert.notEqual(classifyIncoming(jettonWatch, tx(JETTON_WALLET, { source: OTHER_WALLET, body: withForward(1n) }), { gasWallet: GAS }), null);
  });
});

describe('classifyIncoming: TON on a deposit', () => {
  it('TON that stayed pays: its amount, sender, fee, chain time and comment (U+0000 replaced)', () => {
    const booked = classifyIncoming(depositWatch, tx(DEPOSIT, { body: comment('order\u00001') }), { gasWallet: GAS });
    assert.deepEqual(booked, {
      account: DEPOSIT,
      paymentId: 'p1',
      depositAddress: DEPOSIT,
      lt: '1000',
      hash: 'ab'.repeat(32),
      chainTime: new Date(1_800_000_000_000),
      comment: 'order\uFFFD1',
      feeBaseUnits: 123n,
      coinSymbol: 'TON',
      jettonMaster: null,
      amountBaseUnits: 1_500_000_000n,
      sender: CUSTOMER,
      credited: true,
      payment: true,
      detail: null,
    });
  });

  it('nothing came in: null', () => {
    assert.equal(classifyIncoming(depositWatch, tx(DEPOSIT, null), { gasWallet: GAS }), null);
  });

  it("a bounce (Kassa's own value back: it stays, pays nothing) and a value sent back (did not stay) are recorded", () => {
    const bounced = classifyIncoming(depositWatch, tx(DEPOSIT, { bounced: true }), { gasWallet: GAS }) as any;
    assert.deepEqual([bounced.credited, bounced.payment, bounced.detail], [true, false, 'bounced_message']);
    const returned = classifyIncoming(depositWatch, tx(DEPOSIT, {}, { bounce: 'ok' }), { gasWallet: GAS }) as any;
    assert.deepEqual([returned.credited, returned.payment, returned.detail], [false, false, 'value_returned']);
  });

  it('any op is value, described in detail; jetton excesses are credited but pay nothing', () => {
    const encrypted = classifyIncoming(depositWatch, tx(DEPOSIT, { body: beginCell().storeUint(OP_ENCRYPTED_COMMENT, 32).endCell() }), {
      gasWallet: GAS,
    }) as any;
    assert.deepEqual([encrypted.payment, encrypted.detail], [true, 'encrypted_comment']);
    const unknown = classifyIncoming(depositWatch, tx(DEPOSIT, { body: beginCell().storeUint(0xabc, 32).endCell() }), { gasWallet: GAS }) as any;
    assert.deepEqual([unknown.payment, unknown.detail], [true, 'op 0x00000abc']);
    const excesses = classifyIncoming(depositWatch, tx(DEPOSIT, { body: beginCell().storeUint(OP_JETTON_EXCESSES, 32).endCell() }), { gasWallet: GAS }) as any;
    assert.deepEqual([excesses.credited, excesses.payment, excesses.detail], [true, false, 'jetton_excesses']);
  });

  it("TON from Kassa's gas wallet is Kassa's own top-up, not a payment", () => {
    const topUp = classifyIncoming(depositWatch, tx(DEPOSIT, { source: GAS }), { gasWallet: GAS }) as any;
    assert.deepEqual([topUp.credited, topUp.payment, topUp.detail], [true, false, "gas top-up from Kassa's gas wallet"]);
  });
});

describe('classifyIncoming: a jetton notification on a deposit', () => {
  const notified = tx(DEPOSIT, { source: OTHER_WALLET, value: 50_000_000n, body: notification(2_000_000n, CUSTOMER) });

  it('asks who sent it before deciding', () => {
    assert.deepEqual(classifyIncoming(depositWatch, notified, { gasWallet: GAS }), { needs: 'notifier', wallet: OTHER_WALLET });
  });

  it("from the payment's own jetton wallet: the forwarded TON is credited, the jetton is counted on the wallet", () => {
    const own = classifyIncoming(depositWatch, notified, { gasWallet: GAS, notifier: { own: true } }) as any;
    assert.deepEqual([own.coinSymbol, own.amountBaseUnits, own.credited, own.payment, own.detail], ['TON', 50_000_000n, true, false, 'jetton_notification']);
  });

  it("from the deposit's genuine wallet of another accepted jetton: the notification is booked as that jetton", () => {
    const genuine = classifyIncoming(depositWatch, notified, { gasWallet: GAS, notifier: { own: false, master: MASTER, coin: 'NOT' } }) as any;
    assert.deepEqual(
      [genuine.coinSymbol, genuine.jettonMaster, genuine.amountBaseUnits, genuine.sender, genuine.credited, genuine.payment],
      ['NOT', MASTER, 2_000_000n, CUSTOMER, true, true],
    );
    assert.equal(genuine.detail, `jetton_notification from ${OTHER_WALLET}; 50000000 nanoTON forwarded`);
  });

  it("unverified (a look-alike or a fake): its TON is value, the token's claim kept beside it", () => {
    const fake = classifyIncoming(depositWatch, notified, { gasWallet: GAS, notifier: { own: false, master: raw('b'), coin: null } }) as any;
    assert.deepEqual(
      [fake.coinSymbol, fake.amountBaseUnits, fake.payment, fake.notifiedJettonMaster, fake.notifiedAmountBaseUnits],
      ['TON', 50_000_000n, true, raw('b'), 2_000_000n],
    );
    assert.equal(fake.detail, `unverified jetton_notification from ${OTHER_WALLET}`);
    // Its payer is the sender the notification names (the jetton wallet only forwarded the TON), not
    // that wallet (the deposit's own wallet of the token, a refund there is lost).
    assert.equal(fake.sender, CUSTOMER);
    // A source that did not answer as a jetton wallet (no master): it paid the TON itself.
    const plain = classifyIncoming(depositWatch, notified, { gasWallet: GAS, notifier: { own: false, master: null, coin: null } }) as any;
    assert.equal(plain.sender, OTHER_WALLET);
  });
});

describe("classifyIncoming: the deposit's jetton wallet", () => {
  it("an internal_transfer is the watch's coin, credited when the wallet accepted it", () => {
    const accepted = classifyIncoming(jettonWatch, tx(JETTON_WALLET, { source: OTHER_WALLET, body: internalTransfer(3_000_000n, CUSTOMER) }), {
      gasWallet: GAS,
    }) as any;
    assert.deepEqual(
      [accepted.coinSymbol, accepted.jettonMaster, accepted.amountBaseUnits, accepted.sender, accepted.credited, accepted.payment, accepted.detail],
      ['USDT', MASTER, 3_000_000n, CUSTOMER, true, true, null],
    );
    const refused = classifyIncoming(
      jettonWatch,
      tx(JETTON_WALLET, { source: OTHER_WALLET, body: internalTransfer(3_000_000n, CUSTOMER) }, { compute: { skipped: false, success: false, exitCode: 707 } }),
      { gasWallet: GAS },
    ) as any;
    assert.deepEqual([refused.credited, refused.payment, refused.detail], [false, true, 'compute_failed']);
  });

  it('anything else on it (TON, excesses, a transfer request) books nothing', () => {
    assert.equal(classifyIncoming(jettonWatch, tx(JETTON_WALLET, {}), { gasWallet: GAS }), null);
    assert.equal(classifyIncoming(jettonWatch, tx(JETTON_WALLET, { body: beginCell().storeUint(OP_JETTON_EXCESSES, 32).endCell() }), { gasWallet: GAS }), null);
  });
});

describe('classifyTreasuryIncoming (a treasury that customers pay by reference)', () => {
  const TREASURY = raw('7');
  const reference = `ABCDEFGH${checkCharacter('ABCDEFGH')}`;
  const shown = `ABCD-EFGH${checkCharacter('ABCDEFGH')}`;
  const textAlone = (text: string): Cell => beginCell().storeStringTail(text).endCell();

  it('reads the reference from a comment inline, in a ref cell, without the zero prefix, in lower case without the dash', () => {
    const bodies: Array<[string, Cell]> = [
      ['inline', comment(shown)],
      ['in a ref cell', beginCell().storeRef(comment(shown)).endCell()],
      ['without the prefix', textAlone(shown)],
      ['lower case, no dash', comment(reference.toLowerCase())],
      [
        'snake across cells',
        beginCell()
          .storeUint(0, 32)
          .storeStringTail(`${'  '.repeat(70)}${shown}`)
          .endCell(),
      ],
    ];
    for (const [what, body] of bodies) {
      const incoming = classifyTreasuryIncoming(tx(TREASURY, { body }));
      assert.deepEqual(incoming?.read, { kind: 'reference', reference }, what);
      assert.equal(incoming?.amountBaseUnits, 1_500_000_000n);
      assert.equal(incoming?.sender, CUSTOMER);
    }
  });

  it('no comment, an encrypted comment, binary junk and a typo are what the unmatched reasons say', () => {
    assert.deepEqual(classifyTreasuryIncoming(tx(TREASURY, {}))?.read, { kind: 'none' });
    assert.deepEqual(classifyTreasuryIncoming(tx(TREASURY, { body: beginCell().storeUint(OP_ENCRYPTED_COMMENT, 32).storeUint(5, 64).endCell() }))?.read, {
      kind: 'encrypted',
    });
    assert.deepEqual(classifyTreasuryIncoming(tx(TREASURY, { body: beginCell().storeUint(0xdeadbeef, 32).storeUint(1, 64).endCell() }))?.read, {
      kind: 'none',
    });
    const typo = `${reference.slice(0, 8)}${reference[8] === '0' ? '1' : '0'}`;
    assert.deepEqual(classifyTreasuryIncoming(tx(TREASURY, { body: comment(typo) }))?.read, { kind: 'malformed', text: typo });
  });

  it("the treasury's own outgoing traffic, a bounce, a returned value, jetton notifications and excesses are no money in", () => {
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, { source: null, value: 0n })), null, 'an external message: the merchant spending');
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, { bounced: true })), null);
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, {}, { bounce: 'ok' })), null);
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, { body: notification(5n, CUSTOMER) })), null);
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, { body: beginCell().storeUint(OP_JETTON_EXCESSES, 32).storeUint(0, 64).endCell() })), null);
    assert.equal(classifyTreasuryIncoming(tx(TREASURY, { value: 0n, body: comment(shown) })), null);
  });
});
