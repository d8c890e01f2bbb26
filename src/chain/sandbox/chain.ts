/**
 * The sandbox TON network (docs/API.md, Sandbox network): a real TVM emulator (@ton/sandbox) with a funded customer
 * wallet and standard jetton minters, fully offline. Test switches on its jetton side: a jetton
 * wallet can be locked like a frozen USDT wallet (lockJettonWallet: it refuses internal_transfer with
 * exit 45, so the transfer bounces back to the sender's jetton wallet, by real TVM), a jetton can be
 * sent without a notification (transfer's `notify: false`: forward_ton_amount 0), and its toncenter
 * v3 lists owners' jetton wallets (`jetton/wallets`, v3JettonWallets.ts) as the indexer does.
 * Dev/test only: outside src/chain/sandbox/ only src/http/routes/sandbox.ts imports it (and is
 * itself loaded with import()), so the production image needs none of it; src/chain/sandbox/path.ts
 * holds the plain paths others may import.
 *
 * Its order of events is mainnet's: a transaction is made at once (a message meets the emulator's
 * state now, as a validator's would) but is on the chain only once a sealed masterchain block
 * commits it (sealBlock; commitLate holds a shard block back, holdBlock(s) keep blocks unindexed).
 * The v3 API (v3.ts) serves indexed blocks; the v2 API (jsonrpc.ts) answers as of the last
 * masterchain block, as ton-http-api does (v2State): a wallet whose transaction is not committed
 * yet still shows its old seqno and balance. So commitLate plays what the tests of issue 31 drive: a
 * payment cancelled before its transfer's shard block is committed (booked after_cancel), a message
 * out committed past the late-commit margin (re-signed with the same seqno and refused; or, failed
 * after every message expired unseen, still confirming its transfer when it lands).
 */
import crypto from 'node:crypto';
import { Address, beginCell, Cell, loadShardAccount, loadTransaction, storeShardAccount, toNano } from '@ton/core';
import { Blockchain, SmartContract, createEmptyShardAccount, createShardAccount, snapshotFromSerializable, snapshotToSerializable } from '@ton/sandbox';
import type { BlockchainTransaction, SandboxContract, SendMessageResult, TreasuryContract } from '@ton/sandbox';
/**
 * What `SandboxChain.save()` returns: @ton/sandbox's serialisable snapshot of the accounts, and the
 * transactions as BOCs (its own form of a transaction, with logs and storages, costs ~5 ms each).
 */
interface SavedChain {
  chain: ReturnType<typeof snapshotToSerializable>;
  /** Every transaction's BOC (base64), oldest first. */
  transactions: string[];
}

/** A transaction read back from its BOC, as the emulator's own record of it (without logs). */
function transactionFromBoc(boc: string): BlockchainTransaction {
  const raw = Cell.fromBase64(boc);
  const transaction = loadTransaction(raw.beginParse());
  return {
    ...transaction,
    raw,
    hash: () => raw.hash(),
    blockchainLogs: '',
    vmLogs: '',
    debugLogs: '',
    events: [],
    children: [],
    externals: [],
  } as unknown as BlockchainTransaction;
}
import { parseAddress } from '../addresses.ts';
import { fromBaseUnits } from '../../money.ts';
import { OP_JETTON_INTERNAL_TRANSFER } from '../detect.ts';
import { transactionHashHex } from '../transactions.ts';
import { handleJsonRpc } from './jsonrpc.ts';
import type { JsonRpcReply } from './jsonrpc.ts';
import { handleV3, type V3Reply } from './v3.ts';
import { defaultV3Options, type V3Options } from './v3Params.ts';
import { jettonTransferBody } from '../jettonTransfer.ts';
import { jettonWalletCodeCell, lockedJettonWalletCode, minterAddress, minterInit, mintBody, onchainContent, textComment, walletData } from './jetton.ts';

export type SandboxCoin = { symbol: string; decimals: number };

/** TON itself plus the jettons of the coin catalogue (the `coins` table, docs/API.md). */
export const SANDBOX_JETTONS: readonly SandboxCoin[] = [
  { symbol: 'USDT', decimals: 6 },
  { symbol: 'NOT', decimals: 9 },
  { symbol: 'DOGS', decimals: 9 },
  { symbol: 'BUILD', decimals: 9 },
  { symbol: 'BLUM', decimals: 9 },
  { symbol: 'DUST', decimals: 9 },
  { symbol: 'DYOR', decimals: 15 },
  { symbol: 'STON', decimals: 9 },
  { symbol: 'XAUt0', decimals: 6 },
];
export const TON_DECIMALS = 9;

/** Jetton names in the minters' on-chain metadata (cosmetic). */
const JETTON_NAMES: Record<string, string> = {
  USDT: 'Tether USD',
  NOT: 'Notcoin',
  DOGS: 'Dogs',
  BUILD: 'BUILD',
  BLUM: 'Blum',
  DUST: 'DeDust',
  DYOR: 'DYOR',
  STON: 'STON',
  XAUt0: 'Tether Gold',
};

export type SandboxTransferErrorCode = 'unknown_coin' | 'invalid_amount' | 'invalid_address' | 'invalid_request' | 'insufficient_funds' | 'transfer_failed';
type TransferParam = 'to' | 'coin' | 'amount' | 'bounce' | 'comment' | 'fromLookalike' | 'bodyOp' | 'notify' | 'from' | 'payload' | null;

/** A transfer request the sandbox refuses; `invalidInput` when the caller's input was wrong (else the transfer failed). */
export class SandboxTransferError extends Error {
  readonly code: SandboxTransferErrorCode;
  readonly param: TransferParam;
  readonly invalidInput: boolean;
  constructor(code: SandboxTransferErrorCode, message: string, param: TransferParam, invalidInput = true) {
    super(message);
    this.name = 'SandboxTransferError';
    this.code = code;
    this.param = param;
    this.invalidInput = invalidInput;
  }
}

export type SandboxTransferRequest = {
  /** Destination in any form (raw or user-friendly); for jettons, the destination OWNER. */
  to: string;
  /** 'TON' or a jetton symbol (case-insensitive). */
  coin: string;
  /** Decimal string in whole coins, e.g. "1.5"; at most the coin's decimals. */
  amount: string;
  /** TON only: send a bounceable message (default false, as wallets do for UQ… addresses). */
  bounce?: boolean;
  /** Jettons only: send from the look-alike "USDT" minter instead of the real one. */
  fromLookalike?: boolean;
  /** Text comment (TON: message body; jettons: forward payload). */
  comment?: string;
  /** The sending wallet: one of createWallet()'s (default: the customer), as a merchant's wallet or a treasury signing a TON Connect request. */
  from?: string;
  /** TON only: the message body as a base64 BoC (a TON Connect message's payload), instead of a comment. */
  payload?: string;
  /** TON only: a body of this 32-bit op and a few bytes instead of a comment (e.g. 0x2167da4b, an encrypted comment). */
  bodyOp?: number;
  /**
   * Jettons only: false sends `forward_ton_amount = 0`, so the owner gets no transfer_notification
   * (TEP-74) and nothing at all reaches the destination address itself (default true: 1 nanoTON forwarded).
   */
  notify?: boolean;
};

export type SandboxTransferResult = { hash: string; lt: string };

type JettonInfo = { symbol: string; decimals: number; master: Address };

/**
 * A masterchain block of the sandbox: every transaction executed since the previous one, plus what
 * the v3 emulation synthesises around them as on the real chain (v3.ts): the tick and tock
 * transactions of the special accounts, and `others` transfers between accounts nobody here knows.
 * `startLt`/`endLt` bound the logical times of those synthesised rows.
 */
export type SandboxBlock = {
  seqno: number;
  utime: number;
  transactions: { tx: BlockchainTransaction; account: string }[];
  startLt: bigint;
  endLt: bigint;
  others: number;
};

/** One block per this much wall-clock time while the block clock runs (mainnet since 2026). */
export const SANDBOX_BLOCK_INTERVAL_MS = 400;

const CUSTOMER_BALANCE = toNano('1000000000'); // a billion TON
const JETTON_SUPPLY_WHOLE = 1_000_000_000_000n; // minted to the customer per jetton
const WALLET_TON = toNano('1000'); // a sandbox wallet's TON (createWallet)
const WALLET_JETTONS_WHOLE = 10_000n; // and of each jetton

function toBaseUnits(amount: string, decimals: number): bigint {
  if (typeof amount !== 'string' || !/^\d+(\.\d+)?$/.test(amount)) {
    throw new SandboxTransferError('invalid_amount', `amount must be a positive decimal string, got ${JSON.stringify(amount)}`, 'amount');
  }
  const [whole = '0', frac = ''] = amount.split('.');
  if (frac.length > decimals) {
    throw new SandboxTransferError('invalid_amount', `amount has more than ${decimals} decimals`, 'amount');
  }
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt((frac + '0'.repeat(decimals)).slice(0, decimals) || '0');
  if (units <= 0n) throw new SandboxTransferError('invalid_amount', 'amount must be positive', 'amount');
  return units;
}

function accountOf(tx: BlockchainTransaction): Address | null {
  const dest = tx.inMessage?.info.dest;
  return Address.isAddress(dest) ? dest : null;
}

export class SandboxChain {
  readonly blockchain: Blockchain;
  /** The customer: a well-funded wallet holding every sandbox jetton. */
  readonly customer: SandboxContract<TreasuryContract>;
  /** Raw address of the look-alike "USDT" master (same metadata, different minter). */
  readonly lookalikeMaster: string;

  private readonly jettons = new Map<string, JettonInfo>(); // key: upper-case symbol
  private readonly lookalike: JettonInfo;
  private readonly jettonWallets = new Map<string, Address>(); // `${master}|${owner}` → wallet
  /** Wallets the sandbox holds the key of (createWallet), by raw address; kept in memory only (a restarted sandbox knows none). */
  private readonly wallets = new Map<string, SandboxContract<TreasuryContract>>();
  /** Account (raw) → the owner and master of the jetton wallet it is, or null when it is no jetton wallet. */
  private readonly walletOwners = new Map<string, { owner: string; master: string } | null>();

  // Transaction index, per account (raw), ascending lt. Built from snapshot().transactions
  // (Blockchain.getTransactions reverses its list in place and matches hashes by identity).
  private readonly byAccount = new Map<string, BlockchainTransaction[]>();
  private indexed = new WeakSet<BlockchainTransaction>();
  private scanned = 0;
  private indexedLt = -1n;
  private txCount = 0;
  private maxUtime = 0;

  private failures: { remaining: number; status: number } = { remaining: 0, status: 429 };
  /** How the toncenter v3 emulation answers where deployments differ (v3Params.ts): a test may change it. */
  readonly v3: V3Options = defaultV3Options();

  // Blocks. Seqnos start from the wall clock (one per 100 ms) so that a sandbox restarted under
  // a stored cursor keeps counting upwards, like its logical time.
  private readonly blockList: SandboxBlock[] = [];
  private readonly firstSeqno = Math.floor(Date.now() / 100);
  private unsealed: { tx: BlockchainTransaction; account: string }[] = [];
  private heldFrom: number | null = null;
  /** Blocks held unindexed one by one (out-of-order indexing): later ones are visible. */
  private readonly heldBlocks = new Set<number>();
  /** Held by holdBlock() before they were sealed (the next seal takes the first). */
  private holdNext = 0;
  private othersPerBlock = 0;
  /** Transactions held out of the blocks for `blocks` more seals (a shard block committed late). */
  private late: { blocks: number; transactions: { tx: BlockchainTransaction; account: string }[] }[] = [];
  /**
   * Per account (raw), its state as of the last masterchain block that committed a transaction of
   * it (a ShardAccount cell), and every transaction committed so far: the v2 API's view (v2State).
   */
  private readonly committedAccounts = new Map<string, Cell>();
  private readonly committedTxs = new WeakSet<BlockchainTransaction>();
  private lastEndLt = BigInt(Date.now()) * 1000n;
  private repeatPages = 0;
  private blockTimer: NodeJS.Timeout | null = null;

  private constructor(args: {
    blockchain: Blockchain;
    customer: SandboxContract<TreasuryContract>;
    jettons: JettonInfo[];
    lookalike: JettonInfo;
  }) {
    this.blockchain = args.blockchain;
    this.customer = args.customer;
    for (const j of args.jettons) this.jettons.set(j.symbol.toUpperCase(), j);
    this.lookalike = args.lookalike;
    this.lookalikeMaster = args.lookalike.master.toRawString();
  }

  /**
   * A fresh chain: customer wallet, one minter per jetton (issuer-owned, supply minted to the
   * customer) and a look-alike USDT minter owned by someone else. Addresses are deterministic.
   * With `saved` (what `save()` returned before a restart): that chain again, every account and
   * transaction as it was; its transactions belong to blocks already published, so none is
   * published again.
   */
  static async create(opts: { jettons?: readonly SandboxCoin[]; now?: number; saved?: SavedChain } = {}): Promise<SandboxChain> {
    const blockchain = await Blockchain.create();
    if (opts.saved) {
      await blockchain.loadFrom({ ...snapshotFromSerializable(opts.saved.chain), transactions: opts.saved.transactions.map(transactionFromBoc) });
    }
    const restored = opts.saved !== undefined;
    // Logical time starts from the wall clock (µs), so a sandbox restarted with the same database
    // keeps producing higher lt values than the transactions stored before: the reader never mistakes
    // a new transaction for one it has read.
    const chainLt = blockchain as unknown as { currentLt: bigint };
    chainLt.currentLt = chainLt.currentLt > BigInt(Date.now()) * 1000n ? chainLt.currentLt : BigInt(Date.now()) * 1000n;
    if (opts.now !== undefined) blockchain.now = opts.now;
    blockchain.verbosity = { print: false, blockchainLogs: false, vmLogs: 'none', debugLogs: false };
    const customer = await blockchain.treasury('kassa-sandbox-customer', { balance: CUSTOMER_BALANCE });
    const issuer = await blockchain.treasury('kassa-sandbox-issuer', { balance: CUSTOMER_BALANCE });
    const impostor = await blockchain.treasury('kassa-sandbox-impostor', { balance: CUSTOMER_BALANCE });

    const deploy = async (admin: SandboxContract<TreasuryContract>, coin: SandboxCoin): Promise<JettonInfo> => {
      const content = onchainContent({
        name: JETTON_NAMES[coin.symbol] ?? coin.symbol,
        symbol: coin.symbol,
        decimals: String(coin.decimals),
        description: `${coin.symbol} on the Kassa sandbox chain`,
      });
      const master = minterAddress(admin.address, content);
      if (restored) return { symbol: coin.symbol, decimals: coin.decimals, master };
      const res = await admin.send({
        to: master,
        value: toNano('0.5'),
        bounce: false,
        init: minterInit(admin.address, content),
        body: mintBody({
          minter: master,
          to: customer.address,
          jettonAmount: JETTON_SUPPLY_WHOLE * 10n ** BigInt(coin.decimals),
          walletTon: toNano('0.1'),
          responseAddress: admin.address,
        }),
      });
      assertAllSucceeded(res, `deploying the ${coin.symbol} minter`);
      return { symbol: coin.symbol, decimals: coin.decimals, master };
    };

    const jettons: JettonInfo[] = [];
    for (const coin of opts.jettons ?? SANDBOX_JETTONS) {
      if (coin.symbol.toUpperCase() === 'TON') throw new Error('TON is not a jetton');
      jettons.push(await deploy(issuer, coin));
    }
    const usdt = jettons.find((j) => j.symbol.toUpperCase() === 'USDT');
    const lookalike = await deploy(impostor, { symbol: 'USDT', decimals: usdt?.decimals ?? 6 });
    const chain = new SandboxChain({ blockchain, customer, jettons, lookalike });
    if (restored) {
      // The loaded transactions were in blocks already read: committed, and published again never.
      chain.sync();
      for (const { tx } of chain.unsealed) chain.committedTxs.add(tx);
      chain.unsealed = [];
    }
    return chain;
  }

  /** The chain's whole state (accounts, transactions, time), as `create({ saved })` takes it back. */
  save(): SavedChain {
    const { transactions, ...accounts } = this.blockchain.snapshot();
    const boc = (tx: BlockchainTransaction) => {
      let saved = this.savedBocs.get(tx);
      if (saved === undefined) {
        saved = tx.raw.toBoc().toString('base64');
        this.savedBocs.set(tx, saved);
      }
      return saved;
    };
    return { chain: snapshotToSerializable({ ...accounts, transactions: [] }), transactions: transactions.map(boc) };
  }

  /** Each transaction's BOC once made (a transaction never changes): a save encodes only the new ones. */
  private readonly savedBocs = new WeakMap<BlockchainTransaction, string>();

  /** The chain's logical time: it moves whenever a transaction is made (what a saver watches). */
  get lt(): bigint {
    return this.blockchain.lt;
  }

  /** Raw address of the customer wallet that sends every sandbox transfer. */
  get customerAddress(): string {
    return this.customer.address.toRawString();
  }

  /** Symbol → raw master address of every real sandbox jetton. */
  jettonMasters(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const j of this.jettons.values()) out[j.symbol] = j.master.toRawString();
    return out;
  }

  /** Every coin the sandbox can send (TON first), with decimals and master (null for TON). */
  coins(): { symbol: string; decimals: number; master: string | null }[] {
    return [
      { symbol: 'TON', decimals: TON_DECIMALS, master: null },
      ...[...this.jettons.values()].map((j) => ({ symbol: j.symbol, decimals: j.decimals, master: j.master.toRawString() })),
    ];
  }

  // ---- clock ---------------------------------------------------------------------------------

  /** Current on-chain time (unix seconds): pinned by setNow/advance, else the wall clock. */
  get now(): number {
    return this.blockchain.now ?? Math.floor(Date.now() / 1000);
  }

  /** Whether the clock is pinned (else it follows the wall clock). */
  get clockPinned(): boolean {
    return this.blockchain.now !== undefined;
  }

  /**
   * Pins on-chain time. It cannot go back before a transaction already made (the emulator would
   * refuse later transactions on those accounts).
   */
  setNow(unix: number): void {
    if (!Number.isSafeInteger(unix) || unix < 0) throw new RangeError('now must be a unix time in seconds');
    this.sync();
    if (unix < this.maxUtime) {
      throw new RangeError(`cannot set chain time to ${unix}: a transaction already happened at ${this.maxUtime}`);
    }
    this.blockchain.now = unix;
  }

  /** Moves on-chain time forward by `seconds` (pinning it). */
  advance(seconds: number): number {
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw new RangeError('seconds must be a non-negative integer');
    this.setNow(this.now + seconds);
    return this.now;
  }

  /** Unpins the clock: on-chain time follows the wall clock again (never earlier than the last transaction). */
  useWallClock(): void {
    this.sync();
    const wall = Math.floor(Date.now() / 1000);
    this.blockchain.now = wall < this.maxUtime ? this.maxUtime : undefined;
  }

  // ---- transfers -----------------------------------------------------------------------------

  /**
   * The customer wallet sends a real transfer. Returns the transaction that credited the
   * destination: for TON the destination account's transaction, for jettons the
   * internal_transfer on the destination owner's jetton wallet.
   * Throws SandboxTransferError (status 400) for an unknown coin, a bad amount or address.
   */
  async transfer(req: SandboxTransferRequest): Promise<SandboxTransferResult> {
    const to = typeof req.to === 'string' ? parseAddress(req.to) : null;
    if (to === null) throw new SandboxTransferError('invalid_address', 'to is not a TON address', 'to');
    const sender = req.from === undefined ? this.customer : this.walletAt(req.from);
    if (req.payload !== undefined) {
      if (req.coin?.toUpperCase() !== 'TON' || req.comment !== undefined || req.bodyOp !== undefined)
        throw new SandboxTransferError('invalid_request', 'payload is a TON message body: coin TON, without comment or bodyOp', 'payload');
      let body: Cell;
      try {
        body = Cell.fromBase64(req.payload);
      } catch {
        throw new SandboxTransferError('invalid_request', 'payload is not a base64 BoC', 'payload');
      }
      // As a wallet does: bounceable or not as a user-friendly address says (a raw one: as `bounce` says, default not).
      const bounce = req.bounce ?? (Address.isFriendly(req.to) ? Address.parseFriendly(req.to).isBounceable : false);
      return this.sendTon(to, toBaseUnits(req.amount, TON_DECIMALS), bounce, body, sender);
    }
    if (typeof req.coin !== 'string') throw new SandboxTransferError('unknown_coin', 'coin is required', 'coin');
    const symbol = req.coin.toUpperCase();
    if (req.comment !== undefined && (typeof req.comment !== 'string' || Buffer.byteLength(req.comment) > 1000)) {
      throw new SandboxTransferError('invalid_request', 'comment must be a string of at most 1000 bytes', 'comment');
    }
    if (req.bounce !== undefined && typeof req.bounce !== 'boolean') {
      throw new SandboxTransferError('invalid_request', 'bounce must be a boolean', 'bounce');
    }
    if (req.fromLookalike !== undefined && typeof req.fromLookalike !== 'boolean') {
      throw new SandboxTransferError('invalid_request', 'fromLookalike must be a boolean', 'fromLookalike');
    }
    if (req.notify !== undefined && typeof req.notify !== 'boolean') throw new SandboxTransferError('invalid_request', 'notify must be a boolean', 'notify');
    if (symbol === 'TON') {
      if (req.fromLookalike) throw new SandboxTransferError('invalid_request', 'fromLookalike applies to USDT only', 'fromLookalike');
      if (req.notify !== undefined) throw new SandboxTransferError('invalid_request', 'notify applies to jettons only', 'notify');
      if (req.bodyOp !== undefined && (!Number.isSafeInteger(req.bodyOp) || req.bodyOp < 0 || req.bodyOp > 0xffffffff || req.comment !== undefined)) {
        throw new SandboxTransferError('invalid_request', 'bodyOp must be a 32-bit unsigned integer, without a comment', 'bodyOp');
      }
      const body =
        req.bodyOp !== undefined
          ? beginCell().storeUint(req.bodyOp, 32).storeBuffer(Buffer.from('kassa-sandbox')).endCell()
          : req.comment !== undefined
            ? textComment(req.comment)
            : undefined;
      return this.sendTon(to, toBaseUnits(req.amount, TON_DECIMALS), req.bounce ?? false, body, sender);
    }
    if (req.fromLookalike && symbol !== 'USDT') {
      throw new SandboxTransferError('invalid_request', 'fromLookalike applies to USDT only', 'fromLookalike');
    }
    const jetton = req.fromLookalike ? this.lookalike : this.jettons.get(symbol);
    if (jetton === undefined) {
      throw new SandboxTransferError('unknown_coin', `unknown coin ${JSON.stringify(req.coin)}`, 'coin');
    }
    // Jetton wallets accept owners in the basechain only (the transfer would bounce).
    if (to.workChain !== 0) throw new SandboxTransferError('invalid_address', 'jettons can be sent to basechain (workchain 0) addresses only', 'to');
    return this.sendJetton(jetton, to, toBaseUnits(req.amount, jetton.decimals), req.comment, req.notify ?? true, sender);
  }

  /**
   * A new wallet the sandbox holds the key of (a @ton/sandbox treasury), funded with 1,000 TON and
   * 10,000 of each sandbox jetton: a merchant's wallet (a store's treasury) for tests that play it
   * signing a TON Connect request (transfer's `from` and `payload`). Returns its raw address.
   */
  async createWallet(): Promise<string> {
    const wallet = await this.blockchain.treasury(`kassa-sandbox-wallet-${crypto.randomUUID()}`, { balance: WALLET_TON });
    const address = wallet.address.toRawString();
    this.wallets.set(address, wallet);
    for (const jetton of this.jettons.values()) {
      await this.sendJetton(jetton, wallet.address, WALLET_JETTONS_WHOLE * 10n ** BigInt(jetton.decimals), undefined, false, this.customer);
    }
    return address;
  }

  /** A wallet of createWallet() by its address (any form), as a @ton/sandbox contract (tests sign with it); SandboxTransferError when none. */
  walletAt(address: string): SandboxContract<TreasuryContract> {
    const parsed = parseAddress(address);
    const wallet = parsed === null ? undefined : this.wallets.get(parsed.toRawString());
    if (wallet === undefined)
      throw new SandboxTransferError('invalid_address', 'from is not a wallet of this sandbox (POST /sandbox/v1/wallets makes one)', 'from');
    return wallet;
  }

  private async sendTon(to: Address, amount: bigint, bounce: boolean, body: Cell | undefined, sender: SandboxContract<TreasuryContract> = this.customer) {
    const res = await sender.send({
      to,
      value: amount,
      bounce,
      ...(body !== undefined ? { body } : {}),
    });
    const tx = res.transactions.find((t) => {
      const info = t.inMessage?.info;
      return info?.type === 'internal' && info.dest.equals(to) && info.src.equals(sender.address) && !info.bounced;
    });
    if (tx === undefined) throw await this.transferFailure(null, amount, 'the transfer did not reach its destination', sender);
    return { hash: transactionHashHex(tx), lt: tx.lt.toString() };
  }

  private async sendJetton(
    jetton: JettonInfo,
    owner: Address,
    amount: bigint,
    comment: string | undefined,
    notify: boolean,
    sender: SandboxContract<TreasuryContract> = this.customer,
  ) {
    const from = await this.jettonWalletOf(jetton.master, sender.address);
    const destWallet = await this.jettonWalletOf(jetton.master, owner);
    const forwardTonAmount = notify ? 1n : 0n; // > 0: the owner also gets a transfer_notification
    const res = await sender.send({
      to: from,
      value: toNano('0.1'),
      bounce: true,
      body: jettonTransferBody({
        destination: owner,
        amount,
        responseDestination: sender.address,
        forwardTonAmount,
        forwardPayload: comment !== undefined ? textComment(comment) : null,
      }),
    });
    const tx = res.transactions.find((t) => {
      const info = t.inMessage?.info;
      if (info?.type !== 'internal' || !info.dest.equals(destWallet) || info.bounced) return false;
      const body = t.inMessage?.body.beginParse();
      return body !== undefined && body.remainingBits >= 32 && body.loadUint(32) === OP_JETTON_INTERNAL_TRANSFER;
    });
    if (tx === undefined) {
      throw await this.transferFailure(jetton, amount, `the ${jetton.symbol} transfer did not reach the destination jetton wallet`, sender);
    }
    return { hash: transactionHashHex(tx), lt: tx.lt.toString() };
  }

  /**
   * Why a transfer did not arrive: the customer wallet holds less than the amount (its balance is
   * finite, and earlier transfers spend it) is the caller's doing (400 insufficient_funds);
   * anything else is a failure of the sandbox itself (500).
   */
  private async transferFailure(
    jetton: JettonInfo | null,
    amount: bigint,
    message: string,
    sender: SandboxContract<TreasuryContract> = this.customer,
  ): Promise<SandboxTransferError> {
    let balance: bigint;
    try {
      if (jetton === null) {
        balance = (await this.blockchain.getContract(sender.address)).balance;
      } else {
        const res = await this.blockchain.runGetMethod(await this.jettonWalletOf(jetton.master, sender.address), 'get_wallet_data', []);
        balance = res.stackReader.readBigNumber();
      }
    } catch {
      balance = 0n;
    }
    if (balance < amount) {
      return new SandboxTransferError('insufficient_funds', `the sandbox customer wallet holds less than that (${balance} base units)`, 'amount');
    }
    return new SandboxTransferError('transfer_failed', message, null, false);
  }

  /** The jetton wallet of `owner` for `master`, asked of the master (cached). */
  async jettonWalletOf(master: Address, owner: Address): Promise<Address> {
    const key = `${master.toRawString()}|${owner.toRawString()}`;
    const cached = this.jettonWallets.get(key);
    if (cached !== undefined) return cached;
    const res = await this.blockchain.runGetMethod(master, 'get_wallet_address', [{ type: 'slice', cell: beginCell().storeAddress(owner).endCell() }]);
    const wallet = res.stackReader.readAddress();
    this.jettonWallets.set(key, wallet);
    return wallet;
  }

  /**
   * Test switch, a frozen jetton wallet (Tether's stablecoin wallet with its status lock): `owner`'s
   * jetton wallet of `coin` refuses every incoming `internal_transfer` from now on (it throws 45,
   * error::contract_locked; the transfer bounces back to the sending jetton wallet, which adds the
   * amount back), until unlockJettonWallet. Its balance, its get methods and everything else it does
   * stay the standard wallet's; a wallet never used is deployed first (empty). Returns its raw address.
   */
  async lockJettonWallet(owner: string, coin: string): Promise<string> {
    return this.setJettonWalletCode(owner, coin, (code) => lockedJettonWalletCode(code));
  }

  /** Ends lockJettonWallet: the wallet takes incoming transfers again. Returns its raw address. */
  async unlockJettonWallet(owner: string, coin: string): Promise<string> {
    return this.setJettonWalletCode(owner, coin, (code) => code);
  }

  private async setJettonWalletCode(owner: string, coin: string, codeOf: (standard: Cell) => Cell): Promise<string> {
    const ownerAddress = parseAddress(owner);
    if (ownerAddress === null) throw new SandboxTransferError('invalid_address', 'owner is not a TON address', 'to');
    const jetton = this.jettons.get(coin.toUpperCase());
    if (jetton === undefined) throw new SandboxTransferError('unknown_coin', `unknown coin ${JSON.stringify(coin)}`, 'coin');
    const wallet = await this.jettonWalletOf(jetton.master, ownerAddress);
    const contract = await this.blockchain.getContract(wallet);
    const state = contract.accountState?.type === 'active' ? contract.accountState.state : null;
    await this.blockchain.setShardAccount(
      wallet,
      createShardAccount({
        address: wallet,
        code: codeOf(jettonWalletCodeCell()),
        data: state?.data ?? walletData(ownerAddress, jetton.master),
        balance: state === null ? toNano('0.01') : contract.balance,
      }),
    );
    return wallet.toRawString();
  }

  /**
   * The jetton wallets (of any master, the look-alike's too) whose owner is one of `owners` (raw), as
   * an indexer lists them — as of the last masterchain block (v2State): every account that ran the
   * standard wallet code (or its locked form) answers get_wallet_data; its owner and master never
   * change, so they are remembered.
   */
  async jettonWalletsOwnedBy(owners: ReadonlySet<string>): Promise<Array<{ address: string; owner: string; master: string; balance: bigint; lastLt: bigint }>> {
    this.sync();
    const standard = jettonWalletCodeCell();
    const codes = new Set([standard.hash().toString('hex'), lockedJettonWalletCode(standard).hash().toString('hex')]);
    const found: Array<{ address: string; owner: string; master: string; balance: bigint; lastLt: bigint }> = [];
    for (const [account, transactions] of this.byAccount) {
      let known = this.walletOwners.get(account);
      if (known === null) continue;
      const contract = await this.v2State(Address.parseRaw(account));
      const state = contract.accountState?.type === 'active' ? contract.accountState.state : null;
      if (state === null) continue;
      if (known === undefined) {
        if (!state.code || !codes.has(state.code.hash().toString('hex'))) {
          this.walletOwners.set(account, null);
          continue;
        }
        const data = (await contract.get('get_wallet_data')).stackReader;
        data.readBigNumber();
        known = { owner: data.readAddress().toRawString(), master: data.readAddress().toRawString() };
        this.walletOwners.set(account, known);
      }
      if (!owners.has(known.owner)) continue;
      const balance = (await contract.get('get_wallet_data')).stackReader.readBigNumber();
      found.push({ address: account, ...known, balance, lastLt: transactions[transactions.length - 1]?.lt ?? 0n });
    }
    return found;
  }

  /**
   * What `owner` holds, in whole coins: its TON balance and, per sandbox jetton, the balance of
   * its jetton wallet (get_wallet_data; "0" when that wallet was never deployed).
   */
  async balancesOf(owner: Address): Promise<Record<string, string>> {
    const balances: Record<string, string> = { TON: fromBaseUnits((await this.blockchain.getContract(owner)).balance, 9) };
    for (const jetton of this.jettons.values()) {
      const wallet = await this.jettonWalletOf(jetton.master, owner);
      const contract = await this.blockchain.getContract(wallet);
      let units = 0n;
      if (contract.accountState?.type === 'active') {
        units = (await this.blockchain.runGetMethod(wallet, 'get_wallet_data', [])).stackReader.readBigNumber();
      }
      balances[jetton.symbol] = fromBaseUnits(units, jetton.decimals);
    }
    return balances;
  }

  /** Emulates an external message (a signed wallet transfer, as `sendBoc` receives). */
  async sendExternal(message: Cell): Promise<SendMessageResult> {
    return this.blockchain.sendMessage(message);
  }

  // ---- reading -------------------------------------------------------------------------------

  /** Transactions of `address`, ascending lt (a fresh array). */
  transactionsOf(address: Address): BlockchainTransaction[] {
    this.sync();
    return [...(this.byAccount.get(address.toRawString()) ?? [])];
  }

  /** Number of transactions on the chain so far (used as the masterchain seqno). */
  get transactionCount(): number {
    this.sync();
    return this.txCount;
  }

  private sync(): void {
    if (this.blockchain.lt === this.indexedLt) return;
    const all = this.blockchain.snapshot().transactions;
    if (all.length < this.scanned) {
      // state was restored from an older snapshot: start over
      this.byAccount.clear();
      this.indexed = new WeakSet();
      this.scanned = 0;
      this.txCount = 0;
      this.maxUtime = 0;
    }
    // Blockchain.getTransactions() reverses the list in place, which only permutes what was
    // already there: new transactions are always appended, so scanning the tail is enough.
    for (let i = this.scanned; i < all.length; i++) this.add(all[i]);
    this.scanned = all.length;
    this.indexedLt = this.blockchain.lt;
  }

  private add(tx: BlockchainTransaction | undefined): void {
    if (tx === undefined || this.indexed.has(tx)) return;
    this.indexed.add(tx);
    this.txCount++;
    if (tx.now > this.maxUtime) this.maxUtime = tx.now;
    const account = accountOf(tx);
    if (account === null) return;
    const key = account.toRawString();
    this.unsealed.push({ tx, account: key });
    let list = this.byAccount.get(key);
    if (list === undefined) {
      list = [];
      this.byAccount.set(key, list);
    }
    const last = list[list.length - 1];
    list.push(tx);
    if (last !== undefined && last.lt > tx.lt) list.sort((a, b) => (a.lt < b.lt ? -1 : a.lt > b.lt ? 1 : 0));
  }

  // ---- blocks --------------------------------------------------------------------------------

  /**
   * Seals a masterchain block of every transaction executed since the previous one, dated by the
   * chain clock; `others` (default: setTrafficPerBlock's) transfers between strangers are
   * synthesised into it, besides the tick/tock transactions every block has. Returns its seqno.
   */
  sealBlock(options: { others?: number } = {}): number {
    this.sync();
    const last = this.blockList[this.blockList.length - 1];
    const seqno = last === undefined ? this.firstSeqno : last.seqno + 1;
    const utime = Math.max(this.now, last?.utime ?? 0, ...this.unsealed.map((t) => t.tx.now));
    const others = options.others ?? this.othersPerBlock;
    for (const entry of this.late) entry.blocks -= 1;
    for (const entry of this.late.filter((e) => e.blocks <= 0)) this.unsealed.push(...entry.transactions);
    this.late = this.late.filter((e) => e.blocks > 0);
    // A shard's blocks reach the masterchain in order: what an account did after a transaction of
    // it still held back waits with that transaction.
    for (const entry of this.late) {
      const accounts = new Set(entry.transactions.map((t) => t.account));
      entry.transactions.push(...this.unsealed.filter((t) => accounts.has(t.account)));
      this.unsealed = this.unsealed.filter((t) => !accounts.has(t.account));
    }
    let lo = this.lastEndLt + 3n;
    let hi = lo;
    for (const { tx } of this.unsealed) {
      if (tx.lt < lo) lo = tx.lt;
      if (tx.lt > hi) hi = tx.lt;
    }
    if (hi < lo + BigInt(others)) hi = lo + BigInt(others);
    const block: SandboxBlock = { seqno, utime, transactions: this.unsealed, startLt: lo - 2n, endLt: hi + 2n, others };
    this.lastEndLt = block.endLt > this.lastEndLt ? block.endLt : this.lastEndLt;
    this.blockList.push(block);
    this.unsealed = [];
    this.commit(block);
    if (this.holdNext > 0) {
      this.holdNext -= 1;
      this.heldBlocks.add(seqno);
    }
    return seqno;
  }

  /** What the v2 view learns from a block: its transactions are committed, its accounts' states are as of it. */
  private commit(block: SandboxBlock): void {
    if (block.transactions.length === 0) return;
    for (const { tx } of block.transactions) this.committedTxs.add(tx);
    const touched = new Set(block.transactions.map((t) => t.account));
    const storage = (this.blockchain as unknown as { storage: { knownContracts(): SmartContract[] } }).storage;
    for (const contract of storage.knownContracts()) {
      const key = contract.address.toRawString();
      // Every transaction of the account executed so far is in this block or an earlier one (sealBlock
      // synced first and held back the later ones of an account with one held): its state now is its state as of this block.
      if (touched.has(key)) this.committedAccounts.set(key, beginCell().store(storeShardAccount(contract.account)).endCell());
    }
  }

  /** Accounts with transactions executed but not yet in a masterchain block (since the last seal, or held back late). */
  private uncommittedAccounts(): Set<string> {
    this.sync();
    return new Set([...this.unsealed, ...this.late.flatMap((e) => e.transactions)].map((t) => t.account));
  }

  /**
   * An account as the v2 API (ton-http-api) sees it: as of the last masterchain block. An account
   * with a transaction not committed yet answers the state it had before (a wallet's seqno and
   * balance included; unknown before its first committed transaction); any other answers its
   * state now. A sandbox that has sealed no block yet (nobody reads its blocks) answers the
   * emulator's state now.
   */
  async v2State(address: Address): Promise<SmartContract> {
    if (this.blockList.length === 0 || !this.uncommittedAccounts().has(address.toRawString())) return this.blockchain.getContract(address);
    const cell = this.committedAccounts.get(address.toRawString());
    return new SmartContract(cell ? loadShardAccount(cell.beginParse()) : createEmptyShardAccount(address), this.blockchain);
  }

  /** Whether v2 serves this transaction: it is in a masterchain block (or no block was sealed yet). */
  v2Serves(tx: BlockchainTransaction): boolean {
    return this.blockList.length === 0 || this.committedTxs.has(tx);
  }

  /**
   * Test switch, a shard block committed late: the transactions executed since the last seal are
   * left out of the next `blocks - 1` masterchain blocks and committed by the one after (their own
   * time stays when they were made), with every later transaction of their accounts. Meanwhile v2
   * answers those accounts as they were before (v2State), while a message sent to them meets their
   * state now (as a validator's would): on mainnet, a wallet's message accepted before its
   * valid_until can so be read after it, and a second message with the same seqno is refused.
   */
  commitLate(blocks: number): void {
    if (!Number.isSafeInteger(blocks) || blocks < 1) throw new RangeError('blocks must be a positive integer');
    this.sync();
    this.late.push({ blocks, transactions: this.unsealed });
    this.unsealed = [];
  }

  /**
   * Test switch, one account's shard block committed late: as commitLate, for the transactions of
   * `account` (raw or user-friendly) executed since the last seal only — e.g. the customer's jetton
   * wallet taking a jetton transfer, committed `blocks` masterchain blocks after the deposit's
   * transaction that sent it.
   */
  commitLateOnly(account: string, blocks: number): void {
    if (!Number.isSafeInteger(blocks) || blocks < 1) throw new RangeError('blocks must be a positive integer');
    this.sync();
    const raw = Address.parse(account).toRawString();
    this.late.push({ blocks, transactions: this.unsealed.filter((t) => t.account === raw) });
    this.unsealed = this.unsealed.filter((t) => t.account !== raw);
  }

  /** Every block sealed from now on carries `n` synthesised transfers between strangers (bench realism). */
  setTrafficPerBlock(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('n must be a non-negative integer');
    this.othersPerBlock = n;
  }

  /** Seals a block every `intervalMs` of wall-clock time until stopBlockClock (the timer never keeps the process alive). */
  startBlockClock(intervalMs = SANDBOX_BLOCK_INTERVAL_MS): void {
    this.stopBlockClock();
    this.blockTimer = setInterval(() => this.sealBlock(), intervalMs);
    this.blockTimer.unref();
  }

  stopBlockClock(): void {
    if (this.blockTimer !== null) clearInterval(this.blockTimer);
    this.blockTimer = null;
  }

  /**
   * Test switch, an indexer behind as a whole: blocks sealed from now on are not indexed (the API
   * neither serves them nor counts them in masterchainInfo.last) until releaseBlocks().
   */
  holdBlocks(): void {
    this.heldFrom ??= (this.blockList[this.blockList.length - 1]?.seqno ?? this.firstSeqno - 1) + 1;
  }

  /**
   * Test switch, out-of-order indexing (ton-index-worker indexes and commits masterchain blocks in
   * parallel, in no fixed order): block `seqno` (default: the next one sealed) stays unindexed —
   * its transactions answer 404 "masterchain block N not found" (or `v3.unindexedBlock`'s empty
   * list) — while later blocks become visible and
   * masterchainInfo.last moves past it, until releaseBlock(seqno) or releaseBlocks(). Returns the seqno.
   */
  holdBlock(seqno?: number): number {
    if (seqno === undefined) {
      this.holdNext += 1;
      return (this.blockList[this.blockList.length - 1]?.seqno ?? this.firstSeqno - 1) + this.holdNext;
    }
    this.heldBlocks.add(seqno);
    return seqno;
  }

  /** Indexes a block held by holdBlock (it becomes visible, complete, at once). */
  releaseBlock(seqno: number): void {
    this.heldBlocks.delete(seqno);
  }

  /** Ends every hold (holdBlocks and holdBlock). */
  releaseBlocks(): void {
    this.heldFrom = null;
    this.heldBlocks.clear();
    this.holdNext = 0;
  }

  private isIndexed(seqno: number): boolean {
    return !this.heldBlocks.has(seqno) && (this.heldFrom === null || seqno < this.heldFrom);
  }

  /** Test switch: the next `n` requests for a page past the first answer the previous page again. */
  repeatNextPages(n = 1): void {
    this.repeatPages = n;
  }

  /** @internal consumed by the v3 handler */
  takeRepeatedPage(): boolean {
    if (this.repeatPages <= 0) return false;
    this.repeatPages--;
    return true;
  }

  /** The newest indexed block, as masterchainInfo.last (the highest seqno indexed; sealing one first if none exists yet). */
  latestPublishedBlock(): SandboxBlock {
    if (this.blockList.length === 0) this.sealBlock();
    for (let i = this.blockList.length - 1; i >= 0; i--) {
      const block = this.blockList[i]!;
      if (this.isIndexed(block.seqno)) return block;
    }
    return this.blockList[0]!;
  }

  /** The chain's first block (null before one is sealed). */
  firstBlock(): SandboxBlock | null {
    return this.blockList[0] ?? null;
  }

  /** An indexed block by seqno, or null (unknown, or not indexed yet). */
  publishedBlock(seqno: number): SandboxBlock | null {
    const first = this.blockList[0];
    if (first === undefined || !Number.isSafeInteger(seqno)) return null;
    const block = this.blockList[seqno - first.seqno];
    if (block === undefined || !this.isIndexed(seqno)) return null;
    return block;
  }

  /** toncenter API v3 emulation (GET paths under /api/v3/): give it the path after /api/v3/ and the query. */
  handleV3(path: string, query: URLSearchParams): V3Reply | Promise<V3Reply> {
    return handleV3(this, path, query);
  }

  // ---- JSON-RPC ------------------------------------------------------------------------------

  /** Makes the next `n` JSON-RPC requests fail with `status` (toncenter error shape). */
  failNext(n: number, status = 429): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('n must be a non-negative integer');
    this.failures = { remaining: n, status };
  }

  /** @internal consumed by the JSON-RPC handler */
  takeInjectedFailure(): number | null {
    if (this.failures.remaining <= 0) return null;
    this.failures.remaining--;
    return this.failures.status;
  }

  /** toncenter API v2 JSON-RPC emulation, framework-free: give it the parsed request body. */
  handleJsonRpc(body: unknown): Promise<JsonRpcReply> {
    return handleJsonRpc(this, body);
  }
}

function assertAllSucceeded(res: SendMessageResult, what: string): void {
  for (const tx of res.transactions) {
    const d = tx.description;
    if (d.type === 'generic' && (d.aborted || (d.computePhase.type === 'vm' && !d.computePhase.success))) {
      // The treasury's own external transaction never aborts; anything else that does is a bug here.
      throw new Error(`sandbox: ${what} failed (transaction ${transactionHashHex(tx)})`);
    }
  }
}
