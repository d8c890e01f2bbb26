// A store's settings changed by a person: `kassa store update` and the dashboard's Settings page
// both come here. One command (stores.ts updateStore: the same validation, the treasury's included)
// and its audit rows, in one transaction: a change and its record commit together or not at all.
// A treasury change is a money action of its own (treasury.change, with the old and new address);
// the other fields are one store.update row naming what changed.
import type { TonNetwork } from '../chain/addresses.ts';
import type { DatabasePool } from '../db/pool.ts';
import { findStore, StoreInputError, type StoreView, updateStore } from '../stores/stores.ts';
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
    case 'methods':
      return store.methods
        .map((m) => `${m.coin}/${m.chain}`)
        .sort()
        .join(',');
  }
};

export interface StoreChange {
  store: StoreView;
  /** The fields whose value changed (an unchanged resubmission writes no audit row). */
  changed: StoreField[];
}

/**
 * Changes a store as `kassa store update` does (flag → raw value; '' clears), writes the audit
 * rows, and answers the store. StoreInputError (with its flag) when anything is invalid: nothing changed.
 */
export async function changeStore(
  pool: DatabasePool,
  input: { storeId: string; given: Record<string, string>; network: TonNetwork; actor: Actor; now: Date },
): Promise<StoreChange> {
  return pool.transaction(async (tx) => {
    const before = await findStore(tx, input.storeId);
    if (!before) throw new StoreInputError(`no store with id "${input.storeId}"`);
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
export function formMessage(error: StoreInputError): string {
  const flag = error.flag as StoreField | null;
  const text = flag && Object.hasOwn(STORE_FIELDS, flag) ? error.message.replace(`--${flag}`, STORE_FIELDS[flag]) : error.message;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!]$/.test(text) ? '' : '.'}`;
}
