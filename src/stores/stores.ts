// Merchant stores: their names, the payment methods they accept, the treasury their money goes to and
// how it is settled there, and their options (the Telegram bot and Mini App, the origins that may embed
// <kassa-pay>, the refund window, …) — created, read and changed here for the dashboard (its setup,
// dashboard/settings.ts changeStore) and `kassa store …` alike.
import type { TonNetwork } from '../chain/addresses.ts';
import { destinationForm, ownWalletProblem } from '../treasury/destinations.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { FormProblem } from '../errors.ts';
import { isUuid } from '../uuid.ts';
import { coinSymbol } from '../money.ts';
import { isHostName } from '../net/addresses.ts';

export interface MethodRef {
  coin: string;
  chain: string;
}

export interface StoreRecord {
  id: string;
  name: string;
  methods: Array<{ id: string; coin: string; chain: string }>;
  /** The store's treasury wallet (raw form), or null: money stays in the deposit wallets. */
  treasury: string | null;
  /** deposit: a deposit wallet per payment, swept to the treasury; treasury: customers pay the treasury itself, with the payment's reference (CONTRACT §12). */
  settlement: Settlement;
  /** Days a completed sale stays refundable from its deposit before the sweep takes what is left (0–90; 0: swept at once). */
  refundWindowDays: number;
  /** The store's Telegram bot (username, without @) and its Mini App's short name: its payments' telegramURL; null when not set. */
  telegramBot: string | null;
  telegramApp: string | null;
  /** The bot's numeric id: Telegram's init data is checked with it (src/telegram/initData.ts); null when not set. */
  telegramBotID: number | null;
  /** The origins whose pages may embed <kassa-pay> for this store (none: empty). */
  embedOrigins: string[];
  /** Unmatched money below this amount of its coin is dust: listed, no money.unmatched event (default "0.01"). */
  unmatchedDust: string;
}

const SETTLEMENTS = ['deposit', 'treasury'] as const;
type Settlement = (typeof SETTLEMENTS)[number];

/** `--settlement deposit|treasury`. */
function settlement(value: string): Settlement {
  const trimmed = value.trim().toLowerCase();
  if (!(SETTLEMENTS as readonly string[]).includes(trimmed)) throw new FormProblem('--settlement must be deposit or treasury');
  return trimmed as Settlement;
}

export const DEFAULT_METHODS = 'TON/TON,USDT/TON';

/** `--unmatched-dust AMOUNT`: a decimal amount (of whichever coin arrives), 0 to 1,000,000, at most 9 decimals. */
function unmatchedDust(value: string): string {
  const trimmed = value.trim();
  if (!/^\d{1,7}(\.\d{1,9})?$/.test(trimmed) || Number(trimmed) > 1_000_000) {
    throw new FormProblem(
      '--unmatched-dust must be an amount from 0 to 1000000 (e.g. 0.01: below 0.01 TON or 0.01 USDT unmatched money raises no alert)',
      'unmatched-dust',
    );
  }
  return trimmed;
}

/** How many origins a store may list in embedOrigins. */
const EMBED_ORIGINS_MAX = 20;
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * `--embed-origins https://shop.example,https://www.shop.example`: each an origin (scheme, host,
 * port; no path, query, fragment or credentials), https:// — or http:// on a loopback host, for
 * development. Normalised (lower case, default port dropped), duplicates once; '' lists none (null).
 */
export function embedOrigins(value: string): string | null {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) return null;
  if (parts.length > EMBED_ORIGINS_MAX) throw new FormProblem(`--embed-origins lists at most ${EMBED_ORIGINS_MAX} origins`);
  const origins = new Set<string>();
  for (const part of parts) {
    const shown = part.slice(0, 100);
    let url: URL;
    try {
      url = new URL(part);
    } catch {
      throw new FormProblem(`--embed-origins: "${shown}" is not an origin such as https://shop.example`);
    }
    if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || !/^[a-z]+:\/\/[^/]+\/?$/i.test(part)) {
      throw new FormProblem(`--embed-origins: "${shown}" must be an origin only (scheme://host[:port]), without path, query or credentials`);
    }
    const local = LOOPBACK_HOST.test(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
      throw new FormProblem(`--embed-origins: "${shown}" must be https:// (http:// only for localhost or 127.0.0.1)`);
    }
    if (!local && !isHostName(url.hostname)) throw new FormProblem(`--embed-origins: "${shown}" must name a host`);
    origins.add(url.origin);
  }
  return [...origins].join(',');
}

/** The stored column as a list. */
const embedOriginList = (column: string | null): string[] => (column === null || column === '' ? [] : column.split(','));

/** Parses "TON/TON,USDT/TON" (coin/chain pairs, case-sensitive; GRAM is TON: money.ts coinSymbol). */
export function parseMethodList(text: string): MethodRef[] {
  const methods = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [coin, chain, extra] = part.split('/');
      if (!coin || !chain || extra !== undefined) throw new FormProblem(`invalid method "${part}" (expected COIN/CHAIN, e.g. USDT/TON)`, 'methods');
      return { coin: coinSymbol(coin), chain };
    });
  if (methods.length === 0) throw new FormProblem('at least one method is needed (e.g. TON/TON,USDT/TON)', 'methods');
  return methods;
}

/**
 * A treasury address given for `network`, in raw form; FormProblem when it is not one or
 * Kassa cannot send there (not basechain). createStore and updateStore also refuse Kassa's own wallets.
 */
export function parseTreasury(value: string, network: TonNetwork): string {
  const parsed = destinationForm(value, network);
  if ('problem' in parsed) throw new FormProblem(`invalid treasury "${value}": ${parsed.problem}`);
  return parsed.raw;
}

/** FormProblem when the treasury (raw) is one of Kassa's own wallets. */
async function checkTreasuryOwner(db: Db, treasury: string | null): Promise<void> {
  if (treasury === null) return;
  const problem = await ownWalletProblem(db, treasury);
  if (problem !== null) throw new FormProblem(`invalid treasury "${treasury}": ${problem}`, 'treasury');
}

const methodRow = z.object({ id: z.string(), coin: z.string(), chain: z.string() });

/** The catalogue's methods named (duplicates once); FormProblem for one it does not have. */
async function resolveMethods(db: Db, methods: readonly MethodRef[]): Promise<Array<z.infer<typeof methodRow>>> {
  const found: Array<z.infer<typeof methodRow>> = [];
  for (const method of methods) {
    const row = await db.maybeOne(sql.type(methodRow)`
      select id, coin_symbol as coin, chain_symbol as chain from payment_methods
      where coin_symbol = ${method.coin} and chain_symbol = ${method.chain}
    `);
    if (!row) throw new FormProblem(`unknown payment method ${method.coin}/${method.chain}`, 'methods');
    if (!found.some((f) => f.id === row.id)) found.push(row);
  }
  return found;
}

/** Every method of the catalogue ("COIN/CHAIN"), for choosing a store's: natives first, then by coin. */
export async function catalogueMethods(db: Db): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ method: z.string() }))`
    select pm.coin_symbol || '/' || pm.chain_symbol as method from payment_methods pm join coins c on c.symbol = pm.coin_symbol
    order by c.kind desc, pm.coin_symbol, pm.chain_symbol
  `);
}

export async function createStore(
  pool: Db & { transaction: Db['transaction'] },
  name: string,
  methods: MethodRef[],
  options: { treasury?: string | null; refundWindowDays?: number } = {},
): Promise<StoreView> {
  const trimmed = storeName(name);
  return pool.transaction(async (tx) => {
    const found = await resolveMethods(tx, methods);
    const treasury = options.treasury ?? null;
    await checkTreasuryOwner(tx, treasury);
    const window = options.refundWindowDays === undefined ? sql.fragment`default` : sql.fragment`${refundWindowDays(String(options.refundWindowDays))}`;
    const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into stores (name, treasury, refund_window_days) values (${trimmed}, ${treasury}, ${window}) returning id
    `);
    for (const method of found) {
      await tx.query(sql.typeAlias('void')`insert into store_payment_methods (store_id, payment_method_id) values (${id}, ${method.id})`);
    }
    return { ...(await findStore(tx, id))!, methods: found };
  });
}

// ---- Updating a store: each option of `kassa store update` is one entry here (flag, column,
// validation), so a new one is one more entry.

/** The store as `kassa store …` prints it. */
export interface StoreView extends StoreRecord {
  displayName: string | null;
  logoUrl: string | null;
  accentColor: string | null;
}

interface StoreOption {
  /** The CLI flag, without the dashes. */
  flag: string;
  column: string;
  /** The value to store; '' clears it (null). Throws FormProblem when invalid. */
  parse(value: string, network: TonNetwork): string | null;
}

function httpsUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new FormProblem('--logo-url must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:' || url.username || url.password || value.length > 2000 || /\s/.test(value)) {
    throw new FormProblem('--logo-url must be an https:// URL (no credentials, at most 2000 characters)');
  }
  // Its origin goes into the checkout's Content-Security-Policy header (img-src).
  if (!isHostName(url.hostname)) {
    throw new FormProblem(`--logo-url must name a host (letters, digits, hyphens and dots, or an IP address), not "${url.hostname.slice(0, 100)}"`);
  }
  return url.toString();
}

/** A refund window in whole days, 0 to 90 (CONTRACT §11), as text for the column. */
function refundWindowDays(value: string): string {
  const trimmed = value.trim();
  if (!/^\d{1,2}$/.test(trimmed) || Number(trimmed) > 90) throw new FormProblem('--refund-window-days must be a whole number of days from 0 to 90');
  return String(Number(trimmed));
}

/** A Telegram bot's username (with or without its @): 5 to 32 letters, digits or underscores, ending in "bot", as Telegram requires. */
function telegramBot(value: string): string {
  const name = value.trim().replace(/^@/, '');
  if (!/^[A-Za-z][A-Za-z0-9_]{3,31}$/.test(name) || !/bot$/i.test(name)) {
    throw new FormProblem('--telegram-bot must be the bot\'s username: 5 to 32 letters, digits or underscores, ending in "bot" (e.g. ShopPayBot)');
  }
  return name;
}

/** A Mini App's short name, as BotFather's /newapp asks for it: 3 to 30 letters, digits or underscores. */
function telegramApp(value: string): string {
  const name = value.trim();
  if (!/^[A-Za-z0-9_]{3,30}$/.test(name)) throw new FormProblem("--telegram-app must be the Mini App's short name: 3 to 30 letters, digits or underscores");
  return name;
}

/** A bot's numeric id (the digits before the colon of its token), as text for the column. */
function telegramBotId(value: string): string {
  const trimmed = value.trim();
  if (!/^[1-9]\d{0,15}$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed))) {
    throw new FormProblem("--telegram-bot-id must be the bot's numeric id (the digits before the colon of its token)");
  }
  return trimmed;
}

/** The store's name (operators and the dashboard see it; customers see the display name when set). */
export function storeName(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new FormProblem('the store name must be 1 to 200 characters', 'name');
  return trimmed;
}

const STORE_OPTIONS: readonly StoreOption[] = [
  { flag: 'name', column: 'name', parse: (value) => storeName(value) },
  // '' clears it: the store's money then stays in its deposit wallets.
  { flag: 'treasury', column: 'treasury', parse: (value, network) => (value.trim() === '' ? null : parseTreasury(value.trim(), network)) },
  {
    flag: 'display-name',
    column: 'display_name',
    parse: (value) => {
      const trimmed = value.trim();
      if (trimmed.length > 200) throw new FormProblem('--display-name must be at most 200 characters');
      return trimmed === '' ? null : trimmed;
    },
  },
  { flag: 'logo-url', column: 'logo_url', parse: (value) => (value.trim() === '' ? null : httpsUrl(value.trim())) },
  {
    flag: 'accent-color',
    column: 'accent_color',
    parse: (value) => {
      if (value.trim() === '') return null;
      if (!/^#[0-9a-fA-F]{6}$/.test(value.trim())) throw new FormProblem('--accent-color must be a 6-digit hex colour such as #1a73e8');
      return value.trim().toLowerCase();
    },
  },
  // Sales that complete from now on keep it (payments.refundable_until); '' is not a value here.
  { flag: 'refund-window-days', column: 'refund_window_days', parse: (value) => refundWindowDays(value) },
  // The checkout as the store's Telegram Mini App (docs/OPERATIONS.md, Telegram); '' clears each.
  { flag: 'telegram-bot', column: 'telegram_bot', parse: (value) => (value.trim() === '' ? null : telegramBot(value)) },
  { flag: 'telegram-app', column: 'telegram_app', parse: (value) => (value.trim() === '' ? null : telegramApp(value)) },
  { flag: 'telegram-bot-id', column: 'telegram_bot_id', parse: (value) => (value.trim() === '' ? null : telegramBotId(value)) },
  { flag: 'embed-origins', column: 'embed_origins', parse: (value) => embedOrigins(value) },
  // Payments created from now on take it; an open payment keeps the settlement it was created with.
  { flag: 'settlement', column: 'settlement', parse: (value) => settlement(value) },
  // Unmatched money that arrives from now on is judged by it.
  { flag: 'unmatched-dust', column: 'unmatched_dust', parse: (value) => unmatchedDust(value) },
];

const storeViewRow = z.object({
  id: z.string(),
  name: z.string(),
  treasury: z.string().nullable(),
  display_name: z.string().nullable(),
  logo_url: z.string().nullable(),
  accent_color: z.string().nullable(),
  refund_window_days: z.number(),
  telegram_bot: z.string().nullable(),
  telegram_app: z.string().nullable(),
  telegram_bot_id: z.string().nullable(),
  embed_origins: z.string().nullable(),
  settlement: z.enum(SETTLEMENTS),
  unmatched_dust: z.string(),
});

const STORE_COLUMNS = sql.fragment`id, name, treasury, display_name, logo_url, accent_color, refund_window_days, telegram_bot, telegram_app, telegram_bot_id::text, embed_origins, settlement, unmatched_dust::text`;

/** The store's settings as `kassa store …` prints them, from its row. */
function storeSettings(row: z.infer<typeof storeViewRow>): Omit<StoreView, 'id' | 'name' | 'methods'> {
  return {
    treasury: row.treasury,
    settlement: row.settlement,
    refundWindowDays: row.refund_window_days,
    telegramBot: row.telegram_bot,
    telegramApp: row.telegram_app,
    telegramBotID: row.telegram_bot_id === null ? null : Number(row.telegram_bot_id),
    embedOrigins: embedOriginList(row.embed_origins),
    unmatchedDust: row.unmatched_dust,
    displayName: row.display_name,
    logoUrl: row.logo_url,
    accentColor: row.accent_color,
  };
}

export async function findStore(db: Db, id: string): Promise<StoreView | null> {
  if (!isUuid(id)) return null;
  const row = await db.maybeOne(sql.type(storeViewRow)`select ${STORE_COLUMNS} from stores where id = ${id}`);
  if (!row) return null;
  const methods = await db.any(sql.type(methodRow)`
    select pm.id, pm.coin_symbol as coin, pm.chain_symbol as chain
    from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
    where spm.store_id = ${id} order by spm.enabled_at, pm.coin_symbol
  `);
  return { id: row.id, name: row.name, methods: [...methods], ...storeSettings(row) };
}

/** Every store, oldest first (`kassa store list`): as `store update` prints one, with its creation time. */
export async function listStores(db: Db): Promise<{ data: Array<StoreView & { createdAt: string }> }> {
  const rows = await db.any(sql.type(storeViewRow.extend({ created_at: z.date() }))`
    select ${STORE_COLUMNS}, created_at from stores order by created_at, id
  `);
  const methods = await db.any(sql.type(methodRow.extend({ store_id: z.string() }))`
    select spm.store_id, pm.id, pm.coin_symbol as coin, pm.chain_symbol as chain
    from store_payment_methods spm join payment_methods pm on pm.id = spm.payment_method_id
    order by spm.enabled_at, pm.coin_symbol
  `);
  return {
    data: rows.map((row) => ({
      id: row.id,
      name: row.name,
      methods: methods.filter((method) => method.store_id === row.id).map(({ id, coin, chain }) => ({ id, coin, chain })),
      ...storeSettings(row),
      createdAt: row.created_at.toISOString(),
    })),
  };
}

/** The options of `kassa store update`: the columns of STORE_OPTIONS, and the methods (a COIN/CHAIN list, as `store create --methods`). */
export const STORE_UPDATE_FLAGS: readonly string[] = [...STORE_OPTIONS.map((option) => option.flag), 'methods'];

/**
 * Sets the given options (flag → raw value; '' clears one) on a store and returns it; `methods`
 * replaces the store's methods (those kept keep their enabled_at). Invalid input, an unknown store,
 * or nothing given: FormProblem (with the flag it is about), and nothing is changed. Several
 * statements: give it a transaction (or the pool, whose transaction it opens).
 */
export async function updateStore(db: Db, id: string, given: Record<string, string>, network: TonNetwork = 'sandbox'): Promise<StoreView> {
  const changes = STORE_OPTIONS.filter((option) => Object.hasOwn(given, option.flag)).map((option) => {
    try {
      return { option, value: option.parse(given[option.flag]!, network) };
    } catch (error) {
      if (error instanceof FormProblem && error.field === null) throw new FormProblem(error.message, option.flag);
      throw error;
    }
  });
  let methods: MethodRef[] | null = null;
  if (Object.hasOwn(given, 'methods')) {
    try {
      methods = parseMethodList(given.methods!);
    } catch (error) {
      if (error instanceof FormProblem) throw new FormProblem(error.message, 'methods');
      throw error;
    }
  }
  if (changes.length === 0 && methods === null) {
    throw new FormProblem(`nothing to change: give at least one of ${STORE_UPDATE_FLAGS.map((flag) => `--${flag}`).join(', ')}`);
  }
  return db.transaction(async (tx) => {
    if (!(await findStore(tx, id))) throw new FormProblem(`no store with id "${id}"`);
    const treasury = changes.find((change) => change.option.flag === 'treasury');
    if (treasury) await checkTreasuryOwner(tx, treasury.value);
    const settlementChange = changes.find((change) => change.option.flag === 'settlement');
    if (changes.length > 0) {
      const assignments = sql.join(
        changes.map(({ option, value }) => sql.fragment`${sql.identifier([option.column])} = ${value}`),
        sql.fragment`, `,
      );
      // Treasury settlement needs a treasury (stores_treasury_settlement_has_treasury): said in the words of the option given.
      const next = await tx.one(sql.type(z.object({ settlement: z.enum(SETTLEMENTS), has_treasury: z.boolean() }))`
        select ${settlementChange ? sql.fragment`${settlementChange.value}::text` : sql.fragment`settlement`} as settlement,
               ${treasury ? sql.fragment`${treasury.value}::text is not null` : sql.fragment`treasury is not null`} as has_treasury
        from stores where id = ${id}
      `);
      if (next.settlement === 'treasury' && !next.has_treasury) {
        throw settlementChange
          ? new FormProblem('--settlement treasury needs a treasury: give --treasury ADDRESS (the wallet customers pay) with it, or first', 'settlement')
          : new FormProblem('the store settles to its treasury, which cannot be cleared: --settlement deposit first', 'treasury');
      }
      await tx.query(sql.typeAlias('void')`update stores set ${assignments} where id = ${id}`);
    }
    if (methods !== null) {
      const ids = (await resolveMethods(tx, methods)).map((method) => method.id);
      await tx.query(sql.typeAlias('void')`
        delete from store_payment_methods where store_id = ${id} and payment_method_id <> all(${sql.array(ids, 'uuid')})
      `);
      await tx.query(sql.typeAlias('void')`
        insert into store_payment_methods (store_id, payment_method_id) select ${id}, unnest(${sql.array(ids, 'uuid')}) on conflict do nothing
      `);
    }
    return (await findStore(tx, id))!;
  });
}
