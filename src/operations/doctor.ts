// `kassa doctor`: checks a configuration before real money. One check per line; a failed check
// makes the command exit non-zero, a warning does not. The checks that need no I/O are plain
// functions of the configuration.
import { Address, Cell } from '@ton/core';
import {
  WalletContractV1R1,
  WalletContractV1R2,
  WalletContractV1R3,
  WalletContractV2R1,
  WalletContractV2R2,
  WalletContractV3R1,
  WalletContractV3R2,
  WalletContractV4,
  WalletContractV5Beta,
  WalletContractV5R1,
} from '@ton/ton';
import { DERIVATIONS, depositWallet, gasWallet, type Derivation } from '../chain/addresses.ts';
import { toChainApiError } from '../chain/apiError.ts';
import { call, createChainClient, getAccountState, type ChainClient } from '../chain/client.ts';
import { toncenterV3Source } from '../chain/source.ts';
import { BLOCK_INTERVAL_MS, budgetHeadroom, budgetShortfall, READER_REQUESTS_PER_BLOCK, sleep, type RequestBudget } from '../chain/budget.ts';
import { readerPosition } from '../chain/clock.ts';
import { budgetUsage, sharedRequestBudget, type SharedRequestBudget } from '../chain/sharedBudget.ts';
import { SANDBOX_TONCENTER_PATH } from '../chain/sandbox/path.ts';
import { databasePooled, databaseProblem, problemVariable, type Config, type TonNetwork } from '../config.ts';
import { openDatabaseServer, type DatabaseServer } from '../db/embedded.ts';
import { probeTransactionPooler } from '../db/pooling.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { REPLAY_LAG_SECONDS } from '../db/reporting.ts';
import { openPool, sql, z, type Db } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { publicUrlProblems } from '../net/addresses.ts';
import { depositPublicKey, masterKey } from '../payments/deposit.ts';
import { verifyJettonMaster } from './jettonMaster.ts';
import { gasDemand } from '../treasury/gas.ts';
import { TON_FEE_RESERVE_BASE_UNITS } from '../treasury/fees.ts';
import { JETTON_GAS_TOP_UP, TOP_UP_MESSAGE_FEE } from '../treasury/whatToSend.ts';
import { HELD_UNBOOKED_WARN_MS } from '../treasury/signer.ts';
import { fromBaseUnits } from '../money.ts';
import { judgeConnectionRoom } from '../db/connections.ts';

type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

interface Check {
  check: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorReport {
  ok: boolean;
  network: TonNetwork;
  checks: Check[];
}

/** Chain API timeout for the doctor's calls. */
const CHAIN_TIMEOUT_MS = 10_000;

/** A public URL customers and merchants can reach: HTTPS, and no bind, loopback or private host. */
export function checkPublicUrl(name: string, raw: string): Check {
  const problems = publicUrlProblems(raw);
  return problems.length === 0
    ? { check: name, status: 'ok', detail: `${raw}` }
    : { check: name, status: 'fail', detail: `${raw}: ${problems.join('; ')} (set ${name} to the public https:// address)` };
}

function checkNetwork(network: TonNetwork): Check {
  if (network === 'mainnet') return { check: 'TON_NETWORK', status: 'ok', detail: 'mainnet' };
  return { check: 'TON_NETWORK', status: 'warn', detail: network === 'testnet' ? 'testnet: test coins only' : 'sandbox: an emulated chain, no real money' };
}

export function checkApiKey(config: Pick<Config, 'tonNetwork' | 'tonApiKey'>): Check {
  if (config.tonNetwork === 'sandbox') return { check: 'TON_API_KEY', status: 'skip', detail: 'sandbox: the emulated chain needs no key' };
  return config.tonApiKey
    ? { check: 'TON_API_KEY', status: 'ok', detail: 'set' }
    : { check: 'TON_API_KEY', status: 'fail', detail: 'unset: toncenter answers 1 request/s without a key; set TON_API_KEY' };
}

/** The chain API Kassa reads: TON_API_URL (its root), or in sandbox the emulated chain under BASE_URL. */
function chainEndpoint(config: Pick<Config, 'tonApiUrl' | 'baseUrl'>): string {
  return config.tonApiUrl ?? `${config.baseUrl}${SANDBOX_TONCENTER_PATH}`;
}

/** The deployment's shared chain budget (the operator's commands take from it like the service). */
function doctorBudget(config: Config, db: Db): SharedRequestBudget {
  return sharedRequestBudget(db, { apiRoot: chainEndpoint(config), apiKey: config.tonApiKey, rps: config.tonApiRps });
}

/** The chain client of the operator's commands: through the shared budget when given the database (or a budget). */
export function doctorChainClient(config: Config, db?: Db, budget: RequestBudget | null = db ? doctorBudget(config, db) : null): ChainClient {
  return createChainClient({ endpoint: `${chainEndpoint(config)}/api/v2/jsonRPC`, apiKey: config.tonApiKey, timeoutMs: CHAIN_TIMEOUT_MS, budget });
}

/**
 * Both faces the worker uses answer: v3 (the block reader) and v2 JSON-RPC (get methods). `chainTime`:
 * the newest masterchain block's time, for the clock check.
 */
async function checkChainApi(
  client: ChainClient,
  endpoint: string,
  apiKey: string | null = null,
  budget: RequestBudget | null = null,
): Promise<Check & { chainTime?: Date }> {
  try {
    const latest = await toncenterV3Source({ baseUrl: endpoint, apiKey, timeoutMs: CHAIN_TIMEOUT_MS, budget }).latestBlock();
    await client.getMasterchainInfo();
    return { check: 'chain API', status: 'ok', detail: `${endpoint} answers v3 and v2 (masterchain block ${latest.seqno})`, chainTime: latest.time };
  } catch (error) {
    return { check: 'chain API', status: 'fail', detail: `${endpoint}: ${toChainApiError(error).message}` };
  }
}

/** How far behind the chain this machine's clock may be before the doctor says so. */
const CLOCK_BEHIND_WARN_MS = 10_000;
/** A webhook's `signAt` older than this is refused by its receiver (the seed's 30-second check; src/webhooks/receiver.ts). */
const WEBHOOK_SIGN_AT_WINDOW_S = 30;

/**
 * This machine's clock against the chain's: the newest masterchain block the chain API knows can only
 * be older than now, so a block "from the future" means this clock is behind. Transfers out are
 * signed by the later of this clock and the newest block's time the chain reader saw (their wallets
 * check valid_until against the chain's), so they still land; but everything else this machine dates
 * is off by as much — a payment's expiresAt, a treasury refund's validUntil (`ttlSeconds`,
 * OUTGOING_MESSAGE_TTL_SECONDS, is how long a message out lives) and webhooks' signAt, which
 * receivers refuse once it is 30 s old: a warning from 10 s behind, a fail from 30 s. A clock ahead
 * looks like an indexer's lag from here and is not judged.
 */
export function checkClock(chainTime: Date | undefined, now: Date, ttlSeconds: number): Check {
  const check = 'clock';
  if (chainTime === undefined) return { check, status: 'skip', detail: 'not compared: the chain API does not answer' };
  const behindMs = chainTime.getTime() - now.getTime();
  if (behindMs < CLOCK_BEHIND_WARN_MS) {
    return { check, status: 'ok', detail: `the newest masterchain block is ${Math.max(0, Math.round(-behindMs / 1000))} s old by this machine's clock` };
  }
  const seconds = Math.round(behindMs / 1000);
  const why =
    `this machine's clock is ${seconds} s behind the chain's: transfers out are still signed by the chain's time (valid ${ttlSeconds} s, OUTGOING_MESSAGE_TTL_SECONDS), ` +
    "but payments' expiry, treasury refunds' validUntil and webhooks' signAt are dated by this clock";
  if (seconds >= WEBHOOK_SIGN_AT_WINDOW_S)
    return {
      check,
      status: 'fail',
      detail: `${why}: every webhook arrives older than its receiver's ${WEBHOOK_SIGN_AT_WINDOW_S}-s window and is refused. Synchronise the clock (NTP)`,
    };
  return {
    check,
    status: 'warn',
    detail: `${why}: a webhook has only ${WEBHOOK_SIGN_AT_WINDOW_S - seconds} s to reach its receiver. Synchronise the clock (NTP)`,
  };
}

const enabledCoin = z.object({ symbol: z.string(), kind: z.string(), decimals: z.number(), master_address: z.string().nullable() });

/** Coins some store accepts, with their master on `network`. */
async function enabledCoins(db: Db, network: TonNetwork): Promise<readonly z.infer<typeof enabledCoin>[]> {
  return db.any(sql.type(enabledCoin)`
    select c.symbol, c.kind, c.decimals::int as decimals, jm.master_address
    from coins c
    left join jetton_masters jm on jm.coin_symbol = c.symbol and jm.network = ${network}
    where exists (
      select 1 from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
      where pm.coin_symbol = c.symbol
    )
    order by c.symbol
  `);
}

/** Every coin a store accepts: a jetton needs a master on this network that the chain confirms. */
async function checkCoins(db: Db, network: TonNetwork, client: ChainClient): Promise<Check[]> {
  const coins = await enabledCoins(db, network);
  if (coins.length === 0) return [{ check: 'coins', status: 'warn', detail: 'no store accepts any coin yet' }];
  const checks: Check[] = [];
  for (const coin of coins) {
    const name = `coin ${coin.symbol}`;
    if (coin.kind === 'native') {
      checks.push({ check: name, status: 'ok', detail: `${coin.symbol}: the chain's own coin, ${coin.decimals} decimals` });
    } else if (coin.master_address === null) {
      checks.push({
        check: name,
        status: 'fail',
        detail: `${coin.symbol}: no jetton master on ${network}; a store accepts it (kassa coins set-master ${coin.symbol} --network ${network} ADDRESS)`,
      });
    } else {
      const verdict = await verifyJettonMaster(client, coin.symbol, coin.decimals, Address.parseRaw(coin.master_address));
      checks.push({ check: name, status: !verdict.ok ? 'fail' : verdict.decimalsUnverified ? 'warn' : 'ok', detail: verdict.detail });
    }
  }
  return checks;
}

/**
 * The deposit master key, where this process would sign: present, and deriving the deposit
 * addresses already issued on this network (a different key would leave their funds out of reach).
 */
async function checkMasterKey(db: Db, config: Config): Promise<Check> {
  const check = 'KASSA_MASTER_KEY';
  let key: Buffer;
  try {
    key = await masterKey(db, config);
  } catch (error) {
    return { check, status: 'fail', detail: (error as Error).message };
  }
  const source = config.masterKey ? 'set' : 'sandbox: generated into the database';
  const latest = await db.maybeOne(sql.type(
    z.object({ derivation_index: z.string(), address: z.string(), derivation: z.enum(DERIVATIONS as unknown as [Derivation, ...Derivation[]]) }),
  )`
    select derivation_index::text, address, derivation from deposit_addresses where network = ${config.tonNetwork}
    order by derivation_index desc limit 1
  `);
  if (!latest) return { check, status: 'ok', detail: `${source}; no deposit address issued on ${config.tonNetwork} yet to compare` };
  const derived = depositWallet(key, Number(latest.derivation_index), config.tonNetwork, latest.derivation).raw;
  return derived === latest.address
    ? { check, status: 'ok', detail: `${source}; derives the deposit addresses issued (latest index ${latest.derivation_index})` }
    : {
        check,
        status: 'fail',
        detail: `does not derive the deposit addresses already issued (index ${latest.derivation_index}): the funds on them would be out of reach of this key`,
      };
}

/** Stores without a treasury address: their money stays in the deposit wallets (listed, a warning). */
async function checkTreasuries(db: Db): Promise<Check> {
  const without = await db.any(
    sql.type(z.object({ id: z.string(), name: z.string() }))`select id, name from stores where treasury is null order by created_at`,
  );
  if (without.length === 0) return { check: 'treasuries', status: 'ok', detail: 'every store has a treasury' };
  const listed = without
    .slice(0, 20)
    .map((store) => `${store.name} (${store.id})`)
    .join(', ');
  return {
    check: 'treasuries',
    status: 'warn',
    detail: `${without.length} store(s) without a treasury keep their money in the deposit wallets: ${listed}${without.length > 20 ? ', …' : ''}; set one with kassa store update ID --treasury ADDRESS`,
  };
}

/**
 * The sandbox's own test wallets (@ton/sandbox's TreasuryContract, what POST /sandbox/v1/wallets
 * makes): a wallet there, nowhere else. Its code's hash (test/operations/doctor-and-coins checks it).
 */
export const SANDBOX_WALLET_CODE_HASH = 'd992502b94ea96e7b34e5d62ffb0c6fc73d78b3e61f11f0848fb3a1eb1afc912';

/** The wallets a treasury may be (their code's hash, hex → name): the standard wallets v1–v5 (@ton/ton), and the sandbox's. */
function knownWalletCodes(network: TonNetwork): ReadonlyMap<string, string> {
  const publicKey = Buffer.alloc(32);
  const wallets = {
    'wallet v1r1': WalletContractV1R1,
    'wallet v1r2': WalletContractV1R2,
    'wallet v1r3': WalletContractV1R3,
    'wallet v2r1': WalletContractV2R1,
    'wallet v2r2': WalletContractV2R2,
    'wallet v3r1': WalletContractV3R1,
    'wallet v3r2': WalletContractV3R2,
    'wallet v4r2': WalletContractV4,
    'wallet v5 beta': WalletContractV5Beta,
    'wallet v5r1': WalletContractV5R1,
  };
  const known = new Map<string, string>();
  for (const [name, contract] of Object.entries(wallets)) known.set(contract.create({ workchain: 0, publicKey }).init.code.hash().toString('hex'), name);
  if (network === 'sandbox') known.set(SANDBOX_WALLET_CODE_HASH, "the sandbox's test wallet");
  return known;
}

/** What the chain says a treasury is: its state, its code's hash, and whether it answers as a jetton wallet. */
interface TreasuryAccount {
  state: 'active' | 'uninitialized' | 'frozen';
  codeHash: string | null;
  jettonWallet: boolean;
}

/**
 * Why a treasury customers pay by reference is not a wallet Kassa recognises, in a few words, or
 * null when it is one. Comments and the treasury refunds its merchant signs need a wallet: an
 * exchange's deposit address (a wallet of its own kind, or a contract) may drop a comment or credit
 * the exchange, a jetton wallet or another contract cannot sign a refund, and an account never
 * deployed (or frozen) signs nothing until it is.
 */
function treasuryWalletProblem(account: TreasuryAccount, known: ReadonlyMap<string, string>): string | null {
  if (account.state === 'uninitialized') return 'not deployed (uninit): it signs no refund until its wallet sends once';
  if (account.state === 'frozen') return 'frozen: it signs nothing';
  if (account.jettonWallet) return "a jetton wallet, not a wallet: nothing paid to it is the store's to refund";
  if (account.codeHash === null || !known.has(account.codeHash)) {
    return `a contract whose code (${account.codeHash ?? 'none'}) is no wallet Kassa knows (v1–v5): an exchange's deposit address or another contract, where comments and refunds may fail`;
  }
  return null;
}

/** The treasuries of the stores settling there, each a wallet Kassa recognises (a warning naming the others). */
async function checkTreasuryWallets(db: Db, network: TonNetwork, client: ChainClient): Promise<Check> {
  const check = 'treasury wallets';
  const rows = await db.any(sql.type(z.object({ treasury: z.string(), stores: z.array(z.string()) }))`
    select treasury, array_agg(name || ' (' || id || ')' order by created_at) as stores from stores
    where settlement = 'treasury' and treasury is not null group by treasury order by treasury
  `);
  if (rows.length === 0) return { check, status: 'ok', detail: 'no store settles to its treasury' };
  const known = knownWalletCodes(network);
  const problems: string[] = [];
  for (const row of rows) {
    let problem: string | null;
    try {
      const state = await call(() => client.getContractState(Address.parse(row.treasury)));
      const codeHash = state.code ? Cell.fromBoc(state.code)[0]!.hash().toString('hex') : null;
      let jettonWallet = false;
      if (state.state === 'active' && (codeHash === null || !known.has(codeHash))) {
        jettonWallet = await call(() => client.runMethod(Address.parse(row.treasury), 'get_wallet_data')).then(
          () => true,
          () => false,
        );
      }
      problem = treasuryWalletProblem({ state: state.state, codeHash, jettonWallet }, known);
    } catch (error) {
      problem = `not verified: ${toChainApiError(error).message}`;
    }
    if (problem !== null) problems.push(`${row.treasury} of ${row.stores.join(', ')}: ${problem}`);
  }
  if (problems.length === 0) return { check, status: 'ok', detail: `${rows.length} treasury(ies) customers pay by reference, each a wallet Kassa knows` };
  return {
    check,
    status: 'warn',
    detail: `${problems.length} of ${rows.length} treasury(ies) customers pay by reference is not a wallet Kassa knows — ${problems.join('; ')}; set a wallet's address with kassa store update ID --treasury ADDRESS`,
  };
}

/** What the shared chain budget's usage and the reader's position were at one moment (for requests per block). */
export interface BudgetSample {
  at: number;
  requests: bigint | null;
  block: number | null;
  /** The reader wrote its cursor recently: it is running. */
  readerRunning: boolean;
}

async function sampleBudget(db: Db, config: Config): Promise<BudgetSample> {
  const usage = await budgetUsage(db, chainEndpoint(config), config.tonApiKey);
  const position = await readerPosition(db, config.tonNetwork);
  return {
    at: Date.now(),
    requests: usage?.requests ?? null,
    block: position?.lastBlock ?? null,
    readerRunning: position !== null && position.secondsSinceUpdate < 10,
  };
}

/**
 * The chain budget against the chain's block rate: requests per block (measured between two
 * samples while the reader runs, less the doctor's own requests; otherwise the reader's known cost
 * while caught up), what following the chain needs, and the headroom left for everything else.
 */
export function checkBudget(config: Pick<Config, 'tonNetwork' | 'tonApiRps' | 'tonApiKey'>, first?: BudgetSample, last?: BudgetSample, ownRequests = 0): Check {
  const check = 'chain budget';
  const network = config.tonNetwork;
  const blocks = first && last && first.block !== null && last.block !== null ? last.block - first.block : 0;
  const measured =
    first?.readerRunning && last?.readerRunning && first.requests !== null && last.requests !== null && blocks >= 3
      ? Math.max(0, Number(last.requests - first.requests) - ownRequests) / blocks
      : null;
  const perBlock = measured ?? READER_REQUESTS_PER_BLOCK;
  const round = (n: number) => Math.round(n * 100) / 100;
  const { blocksPerSecond, needed, headroom, catchUpFactor } = budgetHeadroom(network, config.tonApiRps, perBlock);
  const cost = `${network} makes ~${round(blocksPerSecond)} masterchain blocks/s (one every ${BLOCK_INTERVAL_MS[network]} ms); ${round(perBlock)} requests per block (${measured === null ? `the reader's cost while caught up; not measured: the reader is not running or read fewer than 3 blocks meanwhile` : `measured over ${blocks} blocks, every process on this key`}) = ${round(needed)} requests/s`;
  if (config.tonApiRps <= 0) {
    return { check, status: network === 'sandbox' ? 'skip' : 'ok', detail: `TON_API_RPS=0: no cap (the API has no limit of its own); ${cost}` };
  }
  const shortfall = budgetShortfall(network, config.tonApiRps, config.tonApiKey !== null);
  const summary = `TON_API_RPS=${config.tonApiRps}, shared by every process on this key; ${cost}; headroom ${round(headroom!)} requests/s for the API, the signer and reconciliation; catching up at ${round(catchUpFactor!)}× the chain`;
  if (shortfall !== null) return { check, status: 'fail', detail: `${summary}. ${shortfall}` };
  if (headroom! < 0) return { check, status: 'fail', detail: `${summary}: the budget cannot follow the chain at the measured cost` };
  if (catchUpFactor! < 1.5)
    return { check, status: 'warn', detail: `${summary}: little to catch up with after downtime; a larger plan (TON_API_RPS) catches up faster` };
  return { check, status: 'ok', detail: summary };
}

/** The doctor samples the budget at least this long when the reader runs, to measure requests per block. */
const BUDGET_SAMPLE_MS = 3_000;

/**
 * The gas wallet can pay what waits for it: the top-ups already planned, and one top-up
 * (JETTON_GAS_TOP_UP) for each jetton sweep or refund planned out of a deposit with none under way.
 * Short of that: fail (those transfers stall until it is funded). Nothing waiting but a balance
 * below one top-up while stores accept jettons: a warning.
 */
async function checkGasWallet(db: Db, config: Config, client: ChainClient): Promise<Check> {
  const check = 'gas wallet';
  // This configuration's gas wallet, computed (the doctor records nothing).
  const wallet = gasWallet(await depositPublicKey(db, config), config.tonNetwork);
  let balance: bigint;
  try {
    balance = (await getAccountState(client, wallet.raw)).balance;
  } catch (error) {
    return { check, status: 'fail', detail: `${wallet.friendly}: its balance could not be read (${toChainApiError(error).message})` };
  }
  const demand = await gasDemand(db, config.tonNetwork, wallet.raw);
  const waiting = demand.jettonSweeps + demand.jettonRefunds;
  // Each top-up message also pays its own fee (TOP_UP_MESSAGE_FEE, whatToSend's batch rule), the batch the wallet's reserve.
  const messages = BigInt(demand.topUps + waiting);
  const needed = demand.owedBaseUnits + BigInt(waiting) * JETTON_GAS_TOP_UP + (messages > 0n ? TON_FEE_RESERVE_BASE_UNITS + messages * TOP_UP_MESSAGE_FEE : 0n);
  const ton = (units: bigint) => `${fromBaseUnits(units, 9)} TON`;
  const what = `${demand.topUps} top-up(s) planned (${ton(demand.owedBaseUnits)}), ${demand.jettonSweeps} jetton sweep(s) and ${demand.jettonRefunds} jetton refund(s) waiting for gas`;
  if (needed > 0n && balance < needed) {
    return {
      check,
      status: 'fail',
      detail: `${wallet.friendly} holds ${ton(balance)}, less than the ${ton(needed)} needed: ${what}; fund it (kassa gas prints its address)`,
    };
  }
  if (needed === 0n && balance < JETTON_GAS_TOP_UP + TON_FEE_RESERVE_BASE_UNITS) {
    const jettons = (await enabledCoins(db, config.tonNetwork)).some((coin) => coin.kind !== 'native');
    if (jettons) {
      return {
        check,
        status: 'warn',
        detail: `${wallet.friendly} holds ${ton(balance)}: each jetton sweep or refund needs about ${ton(JETTON_GAS_TOP_UP)} from it; fund it before jetton payments complete`,
      };
    }
  }
  return { check, status: 'ok', detail: `${wallet.friendly} holds ${ton(balance)}; ${what}` };
}

/**
 * Money stuck in failed transfers out (a warning, with what to do): sweeps that failed and will
 * not be tried again by themselves, held in their deposits; refunds that failed (their amount is
 * refundable again, for the merchant to ask again).
 */
export async function checkFailedTransfers(db: Db): Promise<Check> {
  const rows = await db.any(sql.type(
    z.object({ kind: z.string(), failure_kind: z.string().nullable(), coin_symbol: z.string(), n: z.number(), amount: z.string(), example: z.string() }),
  )`
    select o.kind, o.failure_kind, o.coin_symbol, count(*)::int as n, sum(o.amount)::text as amount, min(o.failure_reason) as example
    from outgoing_transfers o join stores s on s.id = o.store_id
    where o.state = 'failed' and o.kind <> 'gas_top_up'
      and not exists (select 1 from outgoing_transfers l where l.payment_id = o.payment_id and l.kind = o.kind and l.reason = o.reason
                      and l.coin_symbol = o.coin_symbol and l.created_at > o.created_at and l.state <> 'failed')
      and (o.kind = 'refund' or o.failure_kind is distinct from 'transient' or o.retry_at is null)
    group by o.kind, o.failure_kind, o.coin_symbol
    order by o.kind, o.coin_symbol
  `);
  if (rows.length === 0) return { check: 'failed transfers', status: 'ok', detail: 'no money stuck in failed transfers out' };
  const parts = rows.map((r) => `${r.n} ${r.kind}(s) of ${r.amount} ${r.coin_symbol} in all (e.g. "${r.example}")`);
  return {
    check: 'failed transfers',
    status: 'warn',
    detail: `money stuck in failed transfers out: ${parts.join('; ')}. See reporting.outgoing_transfers (state failed, failure_reason). A sweep that failed for good is planned again once the store's treasury is mended (kassa store update ID --treasury ADDRESS, a basechain address); a failed refund's amount is refundable again: ask for it again (POST /v1/payments/{id}/refunds) once its cause is mended; "the wallet holds less" means the books and the chain disagree: see reporting.deposit_differences.`,
  };
}

/**
 * Deposit jetton wallets the chain reader set aside (their master's get_wallet_address failed for
 * good): a warning naming the payments, since money they receive in that coin is not booked.
 */
export async function checkSetAsideWatches(db: Db): Promise<Check> {
  const rows = await db.any(sql.type(z.object({ payment_id: z.string(), coin_symbol: z.string(), jetton_master: z.string(), set_aside_reason: z.string() }))`
    select payment_id, coin_symbol, jetton_master, set_aside_reason from chain_watches where set_aside_at is not null order by set_aside_at desc
  `);
  if (rows.length === 0) return { check: 'watches set aside', status: 'ok', detail: 'the chain reader computed every deposit jetton wallet it was asked for' };
  const listed = rows
    .slice(0, 10)
    .map((row) => `payment ${row.payment_id} (${row.coin_symbol}, master ${row.jetton_master}: "${row.set_aside_reason}")`)
    .join('; ');
  return {
    check: 'watches set aside',
    status: 'warn',
    detail: `${rows.length} deposit jetton wallet(s) set aside: their master would not give the address (get_wallet_address), so money those payments receive in that coin is not booked; every other payment is. ${listed}${rows.length > 10 ? '; …' : ''}. Check the coin's master (kassa coins), then have the reader ask again: update chain_watches set set_aside_at = null, set_aside_reason = null where set_aside_at is not null`,
  };
}

/**
 * The room PostgreSQL leaves for more connections (max_connections less the reserved ones and those
 * open now, on every database of the server): a warning when another API process could be refused
 * (src/db/connections.ts).
 */
async function checkConnections(db: Db): Promise<Check> {
  const check = 'database connections';
  const room = await db
    .one(sql.type(z.object({ max: z.number(), reserved: z.number(), in_use: z.number() }))`
      select current_setting('max_connections')::int as max,
        current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true)::int, 0) as reserved,
        (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as in_use
    `)
    .catch(() => null);
  if (room === null) return { check, status: 'warn', detail: 'could not read max_connections and the connections in use' };
  return { check, ...judgeConnectionRoom({ max: room.max, reserved: room.reserved, inUse: room.in_use }) };
}

/**
 * Planned transfers the signer holds because their wallet accepted a message the books have not
 * seen (unbooked_message; it looks again every 30 s with no end): a warning once one is held longer
 * than HELD_UNBOOKED_WARN_MS, naming the wallets.
 */
export async function checkHeldUnbooked(db: Db, now: Date = new Date()): Promise<Check> {
  const rows = await db.any(sql.type(z.object({ wallet: z.string(), n: z.number(), since: z.date() }))`
    select from_address as wallet, count(*)::int as n, min(held_unbooked_since) as since
    from outgoing_transfers where state = 'planned' and held_unbooked_since is not null
    group by from_address order by min(held_unbooked_since)
  `);
  const long = rows.filter((row) => now.getTime() - row.since.getTime() >= HELD_UNBOOKED_WARN_MS);
  if (long.length === 0)
    return {
      check: 'transfers held',
      status: 'ok',
      detail:
        rows.length === 0
          ? 'no transfer out is held for a message the books have not seen'
          : `${rows.reduce((sum, row) => sum + row.n, 0)} transfer(s) out held for less than ${HELD_UNBOOKED_WARN_MS / 60_000} minutes until the chain reader books their wallet's last message`,
    };
  const listed = long
    .slice(0, 10)
    .map((row) => `${row.wallet}: ${row.n} transfer(s) since ${row.since.toISOString()}`)
    .join('; ');
  return {
    check: 'transfers held',
    status: 'warn',
    detail: `${long.reduce((sum, row) => sum + row.n, 0)} transfer(s) out held for more than ${HELD_UNBOOKED_WARN_MS / 60_000} minutes: their wallet accepted a message the books have not seen, and nothing is signed from it until the chain reader books that message (signing the next seqno could pay a transfer twice). ${listed}${long.length > 10 ? '; …' : ''}. If the chain reader is behind (kassa_chain_lag_seconds), let it catch up; if it is current, look for "a Kassa wallet sent a message Kassa has no record of" in the logs and compare the wallet's transactions with reporting.outgoing_transfers (docs/OPERATIONS.md, "Transfers held for an unbooked message").`,
  };
}

/** The checks of the configuration alone (no I/O). */
function configurationChecks(config: Config): Check[] {
  return [
    checkNetwork(config.tonNetwork),
    checkPublicUrl('BASE_URL', config.baseUrl),
    checkPublicUrl('CHECKOUT_BASE_URL', config.checkoutBaseUrl),
    checkApiKey(config),
  ];
}

/** What reading the configuration found wrong (config.ts readConfig), each a failed check named by its variable. */
function configProblemChecks(problems: readonly string[]): Check[] {
  return problems.map((problem) => ({ check: problemVariable(problem) ?? 'configuration', status: 'fail', detail: problem }));
}

/**
 * The database: reachable, every committed migration applied (the doctor applies none), and on
 * mainnet or testnet not the embedded development one (which a start refuses unless
 * ALLOW_EMBEDDED_DATABASE=true: then a warning).
 */
async function checkDatabase(config: Config, url: string): Promise<Check> {
  const check = 'database';
  let pending: string[];
  try {
    pending = await pendingMigrations(url);
  } catch (error) {
    return { check, status: 'fail', detail: `does not answer: ${(error as Error).message.split('\n')[0]}` };
  }
  if (pending.length > 0) {
    return {
      check,
      status: 'fail',
      detail: `${pending.length} migration(s) not applied (up to ${pending.at(-1)}): run kassa migrate (kassa start migrates too); the checks that read the database did not run`,
    };
  }
  if (config.databaseUrl === null && config.tonNetwork !== 'sandbox') {
    return {
      check,
      status: 'warn',
      detail: `the embedded development database (${config.embeddedPgDir}, allowed by ALLOW_EMBEDDED_DATABASE=true) keeps the books of ${config.tonNetwork}: set DATABASE_URL to a PostgreSQL of yours that is backed up`,
    };
  }
  const which = config.databaseUrl === null ? `the embedded development database (${config.embeddedPgDir})` : 'DATABASE_URL';
  return { check, status: 'ok', detail: `${which} answers; every migration is applied` };
}

/**
 * "database pooling": whether each URL goes through a pooler in transaction mode (pooling.ts), and the
 * statement timeout in force on DATABASE_URL as the service opens it. Fails when migrations and the
 * worker (the session URL) would run through a transaction pooler, or when the timeout in force is
 * not DATABASE_STATEMENT_TIMEOUT_MS (through a pooler Kassa cannot send it at connect: the role's
 * default must say it).
 */
export async function checkPooling(config: Config, server: Pick<DatabaseServer, 'url' | 'sessionUrl'>): Promise<Check> {
  const check = 'database pooling';
  const apart = server.sessionUrl !== server.url;
  let session: Awaited<ReturnType<typeof probeTransactionPooler>>;
  let api: Awaited<ReturnType<typeof probeTransactionPooler>>;
  try {
    session = await probeTransactionPooler(server.sessionUrl);
    api = apart ? await probeTransactionPooler(server.url) : session;
  } catch (error) {
    return { check, status: 'fail', detail: `could not be probed: ${(error as Error).message.split('\n')[0]}` };
  }
  const sessionName = apart
    ? 'DATABASE_SESSION_URL'
    : config.databaseUrl === null
      ? 'the embedded database'
      : 'DATABASE_URL (also the session URL: DATABASE_SESSION_URL is unset)';
  if (session.pooled) {
    return {
      check,
      status: 'fail',
      detail: `${sessionName} goes through a pooler in transaction mode (${session.detail}): migrations (a session's lock) and the worker (LISTEN, the chain reader) would run through it. Set DATABASE_SESSION_URL to a direct or session-mode connection and keep the pooled one in DATABASE_URL (docs/OPERATIONS.md, "Behind a connection pooler")`,
    };
  }
  const pooled = databasePooled(config);
  const pool = await openPool(server.url, {
    maxPoolSize: 1,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    pooled,
    preparedStatements: pooled ? config.databasePreparedStatements : true,
  });
  let inForce: number | null;
  try {
    inForce = await pool
      .oneFirst(sql.type(z.object({ ms: z.number() }))`select setting::int as ms from pg_settings where name = 'statement_timeout'`)
      .catch(() => null);
  } finally {
    await pool.end();
  }
  const where = apart
    ? `DATABASE_URL ${api.pooled ? 'goes through a pooler in transaction mode' : 'is direct or session-mode'}; DATABASE_SESSION_URL is direct or session-mode`
    : `${sessionName} is direct or session-mode`;
  const statements = pooled
    ? config.databasePreparedStatements
      ? 'named prepared statements on (DATABASE_PREPARED_STATEMENTS=true)'
      : 'no named prepared statements'
    : 'named prepared statements';
  if (inForce !== config.databaseStatementTimeoutMs) {
    return {
      check,
      status: 'fail',
      detail: `the statement timeout in force through DATABASE_URL is ${inForce === null ? 'unknown' : `${inForce} ms`}, not DATABASE_STATEMENT_TIMEOUT_MS (${config.databaseStatementTimeoutMs} ms): ${pooled ? `through a pooler Kassa cannot set it at connect; make it the role's default (ALTER ROLE <Kassa's user> SET statement_timeout = '${config.databaseStatementTimeoutMs}ms'), then let the pooler reconnect its server connections` : "something overrides it (the URL's options?)"} (${where})`,
    };
  }
  return { check, status: 'ok', detail: `${where}; statement timeout ${inForce} ms in force; ${statements}` };
}

/** A replica whose lag is above this is a warning: the dashboard's figures are that old. */
const REPLICA_LAG_WARN_SECONDS = 300;

/**
 * "database replica for reports" (DATABASE_REPORTING_URL, db/reporting.ts): reachable, in recovery
 * (a streaming replica) of the same cluster as the primary (`primary`: the session URL's pool), and
 * how far behind it is. The same server as the primary is a warning (reports work, nothing is taken
 * off the primary); a server not in recovery, or a replica of another cluster, fails (the reports
 * would show another database's books).
 */
export async function checkReportingReplica(config: Pick<Config, 'databaseReportingUrl'>, primary: Db): Promise<Check> {
  const check = 'database replica for reports';
  if (config.databaseReportingUrl === null) return { check, status: 'skip', detail: 'DATABASE_REPORTING_URL is unset: the reports read DATABASE_URL' };
  const identity = sql.type(
    z.object({ started: z.string(), system: z.string().nullable(), recovery: z.boolean(), paused: z.boolean(), lag: z.number().nullable() }),
  )`
    select pg_postmaster_start_time()::text as started,
           (select system_identifier::text from pg_control_system()) as system,
           pg_is_in_recovery() as recovery,
           case when pg_is_in_recovery() then pg_get_wal_replay_pause_state() <> 'not paused' else false end as paused,
           ${REPLAY_LAG_SECONDS} as lag
  `;
  // Opened as server.ts opens it: nothing sent at connect (it may be a pooler).
  let seen: z.infer<typeof identity.parser>;
  try {
    const replica = await openPool(config.databaseReportingUrl, { maxPoolSize: 1, pooled: true, preparedStatements: false, connectionWaitMs: 5_000 });
    try {
      seen = await replica.one(identity);
    } finally {
      await replica.end().catch(() => {});
    }
  } catch (error) {
    return { check, status: 'fail', detail: `DATABASE_REPORTING_URL could not be read: ${(error as Error).message.split('\n')[0]}` };
  }
  const own = await primary.one(identity);
  if (seen.started === own.started && seen.system === own.system && seen.recovery === own.recovery) {
    return {
      check,
      status: 'warn',
      detail:
        'DATABASE_REPORTING_URL is the same server as the primary: the reports read it and take no load off it. Point it at a streaming replica, or unset it (docs/OPERATIONS.md, "A replica for reports")',
    };
  }
  if (!seen.recovery) {
    return {
      check,
      status: 'fail',
      detail: `DATABASE_REPORTING_URL is not a replica (not in recovery)${seen.system !== null && seen.system === own.system ? ': a former replica of this database, promoted, whose books no longer follow the primary' : ''}: the dashboard's figures would not be this database's. Point it at a streaming replica of the primary, or unset it`,
    };
  }
  if (seen.system !== null && own.system !== null && seen.system !== own.system) {
    return {
      check,
      status: 'fail',
      detail: `DATABASE_REPORTING_URL is a replica of another PostgreSQL (system identifier ${seen.system}, the primary's ${own.system}): the dashboard's figures would not be this database's`,
    };
  }
  const lag = seen.lag === null ? 0 : Math.round(seen.lag);
  const behind = lag === 0 ? 'it has applied everything it received (no lag)' : `it is ${lag} s behind the primary`;
  if (seen.paused)
    return {
      check,
      status: 'warn',
      detail: `DATABASE_REPORTING_URL is a streaming replica whose replay is paused (pg_wal_replay_resume() resumes it): ${behind}`,
    };
  if (lag > REPLICA_LAG_WARN_SECONDS) {
    return {
      check,
      status: 'warn',
      detail: `DATABASE_REPORTING_URL is a streaming replica, ${behind}: the dashboard's figures are that old (the pages say so). Look at the replica's network and disk, and its max_standby_streaming_delay (docs/OPERATIONS.md, "A replica for reports")`,
    };
  }
  return { check, status: 'ok', detail: `DATABASE_REPORTING_URL is a streaming replica of this database; ${behind}` };
}

/**
 * A reminder off sandbox: the books, the deposit index and (in sandbox) the keys live only in the
 * database. WAL archiving off is a warning (backups by pg_dump or the provider are not visible from here).
 */
async function checkBackups(config: Config, db: Db): Promise<Check> {
  const check = 'database backups';
  if (config.tonNetwork === 'sandbox') return { check, status: 'skip', detail: 'sandbox: no real money' };
  const advice =
    "back the database up (pg_dump on a schedule, or your provider's backups with point-in-time recovery) and try a restore: the books, the deposit addresses issued and the webhook and token keys live only there";
  const mode = await db.oneFirst(sql.type(z.object({ archive_mode: z.string() }))`select current_setting('archive_mode') as archive_mode`).catch(() => null);
  if (mode === 'on' || mode === 'always') return { check, status: 'ok', detail: `WAL archiving is on; ${advice}` };
  return { check, status: 'warn', detail: `WAL archiving is ${mode ?? 'unknown'} on this PostgreSQL: ${advice}` };
}

/**
 * `kassa doctor`: every check, whatever is wrong. Configuration problems are failed checks; the
 * database is opened (never the embedded one off sandbox unless allowed) but not migrated; when it
 * cannot be read, the checks that need it are left out and the database check says why.
 */
export async function doctorReport(config: Config, configProblems: readonly string[], log: Logger): Promise<DoctorReport> {
  const fromConfig = configProblemChecks(configProblems);
  const named = new Set(fromConfig.map((check) => check.check));
  const report = (checks: Check[]): DoctorReport => {
    const all = [...fromConfig, ...checks.filter((check) => !named.has(check.check))];
    return { ok: all.every((check) => check.status !== 'fail'), network: config.tonNetwork, checks: all };
  };
  const withoutDatabase = async (database: Check) => {
    const client = doctorChainClient(config);
    const { chainTime, ...api } = await checkChainApi(client, chainEndpoint(config), config.tonApiKey);
    return report([...configurationChecks(config), api, checkClock(chainTime, new Date(), config.outgoingMessageTtlSeconds), database]);
  };
  const refused = databaseProblem(config);
  if (refused !== null) return withoutDatabase({ check: 'database', status: 'fail', detail: `not opened: ${refused}` });
  let server: Awaited<ReturnType<typeof openDatabaseServer>>;
  try {
    server = await openDatabaseServer(config, log);
  } catch (error) {
    return withoutDatabase({ check: 'database', status: 'fail', detail: `could not be opened: ${(error as Error).message.split('\n')[0]}` });
  }
  try {
    const database = await checkDatabase(config, server.sessionUrl);
    if (database.status === 'fail') return await withoutDatabase(database);
    // Sends nothing at connect a pooler refuses: the doctor reports a session URL that goes through
    // one (database pooling) rather than fail on it.
    const pool = await openPool(server.sessionUrl, { maxPoolSize: 2, pooled: true, preparedStatements: false });
    try {
      const full = await runDoctor(config, pool);
      return report([
        ...full.checks,
        database,
        await checkPooling(config, server),
        await checkReportingReplica(config, pool),
        await checkBackups(config, pool),
      ]);
    } finally {
      await pool.end();
    }
  } finally {
    await server.stop();
  }
}

export async function runDoctor(config: Config, db: Db, client?: ChainClient): Promise<DoctorReport> {
  const budget = doctorBudget(config, db);
  const chain = client ?? doctorChainClient(config, db, budget);
  const first = await sampleBudget(db, config).catch(() => undefined);
  const checks: Check[] = configurationChecks(config);
  const { chainTime, ...api } = await checkChainApi(chain, chainEndpoint(config), config.tonApiKey, budget);
  checks.push(api, checkClock(chainTime, new Date(), config.outgoingMessageTtlSeconds));
  if (api.status === 'ok') checks.push(...(await checkCoins(db, config.tonNetwork, chain)));
  else checks.push({ check: 'coins', status: 'fail', detail: 'not verified: the chain API does not answer' });
  if (api.status === 'ok') checks.push(await checkGasWallet(db, config, chain));
  else checks.push({ check: 'gas wallet', status: 'fail', detail: 'not verified: the chain API does not answer' });
  checks.push(await checkMasterKey(db, config));
  checks.push(await checkTreasuries(db));
  if (api.status === 'ok') checks.push(await checkTreasuryWallets(db, config.tonNetwork, chain));
  else checks.push({ check: 'treasury wallets', status: 'skip', detail: 'not verified: the chain API does not answer' });
  // Requests per block: measured while the reader runs (a few seconds at least).
  if (first?.readerRunning) {
    const left = first.at + BUDGET_SAMPLE_MS - Date.now();
    if (left > 0) await sleep(left);
  }
  const last = await sampleBudget(db, config).catch(() => undefined);
  // The doctor's own requests (through the same budget) are not the deployment's.
  checks.push(checkBudget(config, first, last, budget.taken));
  checks.push(await checkFailedTransfers(db));
  checks.push(await checkSetAsideWatches(db));
  checks.push(await checkHeldUnbooked(db));
  checks.push(await checkConnections(db));
  return { ok: checks.every((check) => check.status !== 'fail'), network: config.tonNetwork, checks };
}

/** One JSON document, one check per line. */
export function formatReport(report: DoctorReport): string {
  return `{"ok":${report.ok},"network":${JSON.stringify(report.network)},"checks":[\n${report.checks.map((check) => JSON.stringify(check)).join(',\n')}\n]}\n`;
}
