// A store's settings changed by a person: `kassa store update` and the dashboard's Settings page
// both come here. One command (stores.ts updateStore: the same validation, the treasury's included)
// and its audit rows, in one transaction: a change and its record commit together or not at all.
// A treasury change is a money action of its own (treasury.change, with the old and new address);
// the other fields are one store.update row naming what changed.
import { Address } from '@ton/core';
import { friendlyAddress, parseAddress, RAW_ADDRESS, type TonNetwork } from '../chain/addresses.ts';
import type { DatabasePool, Db } from '../db/pool.ts';
import { destinationForm, ownWalletProblem } from '../treasury/destinations.ts';
import { FormProblem } from '../errors.ts';
import { findStore, type StoreView, updateStore } from '../stores/stores.ts';
import { type Actor, recordAudit } from './audit.ts';

/** What a field is called for people (the form's label) and in the audit row's detail. */
export const STORE_FIELDS = {
  name: 'Name',
  'display-name': 'Display name',
  'logo-url': 'Logo URL',
  'accent-color': 'Accent colour',
  methods: 'Payment methods',
  treasury: 'Treasury',
  'refund-window-days': 'Refund window',
  'telegram-bot': 'Telegram bot',
  'telegram-app': 'Mini App short name',
  'telegram-bot-id': 'Telegram bot id',
  'embed-origins': 'Sites that may embed the payment element',
  settlement: 'Settlement',
  'unmatched-dust': 'Small unmatched amounts',
} as const;
export type StoreField = keyof typeof STORE_FIELDS;

const settingOf = (store: StoreView, field: StoreField): string | null => {
  switch (field) {
    case 'name':
      return store.name;
    case 'display-name':
      return store.displayName;
    case 'logo-url':
      return store.logoUrl;
    case 'accent-color':
      return store.accentColor;
    case 'treasury':
      return store.treasury;
    case 'refund-window-days':
      return String(store.refundWindowDays);
    case 'telegram-bot':
      return store.telegramBot;
    case 'telegram-app':
      return store.telegramApp;
    case 'telegram-bot-id':
      return store.telegramBotID === null ? null : String(store.telegramBotID);
    case 'embed-origins':
      return store.embedOrigins.join(',');
    case 'settlement':
      return store.settlement;
    case 'unmatched-dust':
      return store.unmatchedDust;
    case 'methods':
      return store.methods
        .map((m) => `${m.coin}/${m.chain}`)
        .sort()
        .join(',');
  }
};

interface StoreChange {
  store: StoreView;
  /** The fields whose value changed (an unchanged resubmission writes no audit row). */
  changed: StoreField[];
}

/**
 * Changes a store as `kassa store update` does (flag → raw value; '' clears), writes the audit
 * rows, and answers the store. FormProblem (with the option it is about) when anything is invalid: nothing changed.
 */
export async function changeStore(
  pool: DatabasePool,
  input: { storeId: string; given: Record<string, string>; network: TonNetwork; actor: Actor; now: Date },
): Promise<StoreChange> {
  return pool.transaction(async (tx) => {
    const before = await findStore(tx, input.storeId);
    if (!before) throw new FormProblem(`no store with id "${input.storeId}"`);
    const store = await updateStore(tx, before.id, input.given, input.network);
    const changed = (Object.keys(STORE_FIELDS) as StoreField[]).filter((field) => settingOf(before, field) !== settingOf(store, field));
    const detail = Object.fromEntries(changed.filter((field) => field !== 'treasury').map((field) => [field, settingOf(store, field)]));
    if (Object.keys(detail).length > 0) {
      await recordAudit(tx, input.actor, { storeId: store.id, action: 'store.update', subject: store.id, detail }, input.now);
    }
    if (changed.includes('treasury')) {
      await recordAudit(
        tx,
        input.actor,
        { storeId: store.id, action: 'treasury.change', subject: store.treasury, detail: { from: before.treasury, to: store.treasury } },
        input.now,
      );
    }
    return { store, changed };
  });
}

/** The message of a refusal for a person at the form: the option's label instead of its CLI flag. */
export function formMessage(error: FormProblem): string {
  const flag = error.field as StoreField | null;
  const text = flag && Object.hasOwn(STORE_FIELDS, flag) ? error.message.replace(`--${flag}`, STORE_FIELDS[flag]) : error.message;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!]$/.test(text) ? '' : '.'}`;
}

/** What a wallet app shows for its account, and its other user-friendly writing (bounceable), on `network`. */
export interface TreasuryForms {
  /** As a wallet app shows it under Receive (non-bounceable, the network's flag: UQ… on mainnet and the sandbox, 0Q… on testnet). */
  shown: string;
  /** The same account bounceable (EQ… / kQ…), as explorers often write it. */
  bounceable: string;
}

/** Kind of contract at an address, as the chain answers: a token's (jetton wallet or master) or not. */
type TokenContractKind = (raw: string) => Promise<'jetton_wallet' | 'jetton_master' | null>;

const RECEIVE = 'Paste the address your wallet app shows under Receive.';

/**
 * Why `value` cannot be the store's treasury, in an owner's words, or its forms to confirm: not an
 * address; written for another network (a testnet address on mainnet or the sandbox, a mainnet
 * one on testnet); not on the chain wallets use; one of Kassa's own wallets; a token's contract
 * rather than a wallet's account (money sent there cannot be spent). The chain is asked last.
 */
export async function checkTreasury(
  db: Db,
  value: string,
  network: TonNetwork,
  kindOf: TokenContractKind,
): Promise<{ problem: string } | { raw: string; forms: TreasuryForms }> {
  const trimmed = value.trim();
  if (parseAddress(trimmed) === null) return { problem: `This is not a TON wallet address. ${RECEIVE}` };
  if (!RAW_ADDRESS.test(trimmed)) {
    const { isTestOnly } = Address.parseFriendly(trimmed);
    if (isTestOnly && network !== 'testnet')
      return { problem: `This address is written for the test network (testnet), not this one: money sent there would not reach your wallet. ${RECEIVE}` };
    if (!isTestOnly && network === 'testnet') return { problem: `This address is written for the main network, and this Kassa runs on testnet. ${RECEIVE}` };
  }
  const form = destinationForm(trimmed, network);
  if ('problem' in form) return { problem: `Kassa cannot send the store's money to this address. ${RECEIVE}` };
  if ((await ownWalletProblem(db, form.raw)) !== null)
    return { problem: "This is one of Kassa's own wallets, not yours: sales sent there would stay in Kassa. Paste your own wallet's address." };
  const kind = await kindOf(form.raw);
  if (kind === 'jetton_wallet')
    return {
      problem: `This is the address of a token balance inside a wallet, not of the wallet itself: money sent there could not be spent. ${RECEIVE}`,
    };
  if (kind === 'jetton_master') return { problem: `This is the address of a token, not of a wallet. ${RECEIVE}` };
  const address = Address.parseRaw(form.raw);
  return {
    raw: form.raw,
    forms: { shown: friendlyAddress(address, network), bounceable: address.toString({ urlSafe: true, bounceable: true, testOnly: network === 'testnet' }) },
  };
}
