// Deposit addresses: one wallet per payment reaching pending, derived offline from the master key.
import crypto from 'node:crypto';
import { depositWallet } from '../chain/addresses.ts';
import type { Config } from '../config.ts';
import { prepared, sql, z, type Db, type FragmentSqlToken } from '../db/pool.ts';

const masterKeys = new WeakMap<object, Buffer>();

/**
 * The deposit master key: KASSA_MASTER_KEY, or in sandbox a key generated into the database on
 * first use. Cached per configuration once it is known to be stored (a key inserted by a
 * transaction that may still roll back is not cached).
 */
export async function masterKey(db: Db, config: Pick<Config, 'masterKey' | 'tonNetwork'>): Promise<Buffer> {
  if (config.masterKey) return Buffer.from(config.masterKey, 'hex');
  const cached = masterKeys.get(config);
  if (cached) return cached;
  if (config.tonNetwork !== 'sandbox') throw new Error('KASSA_MASTER_KEY is required off sandbox');
  const stored = sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'deposit_master_key'`;
  const existing = await db.maybeOneFirst(stored);
  if (existing) {
    masterKeys.set(config, existing);
    return existing;
  }
  await db.query(sql.typeAlias('void')`
    insert into service_secrets (name, secret) values ('deposit_master_key', ${sql.binary(crypto.randomBytes(32))})
    on conflict (name) do nothing
  `);
  return db.oneFirst(stored);
}

export interface ReservedDeposit {
  /** `0:<64 hex>`. */
  address: string;
  friendly: string;
  index: number;
}

/** Takes the next derivation index and derives its wallet (inside the caller's transaction). */
export async function reserveDepositWallet(tx: Db, key: Buffer, network: Config['tonNetwork']): Promise<ReservedDeposit> {
  const index = Number(await tx.oneFirst(prepared(sql.type(z.object({ index: z.string() }))`select nextval('deposit_address_index_seq')::text as index`)));
  const wallet = depositWallet(key, index, network);
  return { address: wallet.raw, friendly: wallet.friendly, index };
}

/** The insert that records a reserved wallet as the payment's deposit address. */
export function depositAddressInsert(paymentId: string, deposit: ReservedDeposit, network: Config['tonNetwork']): FragmentSqlToken {
  return sql.fragment`
    insert into deposit_addresses (payment_id, derivation_index, network, address, address_friendly)
    values (${paymentId}, ${deposit.index}, ${network}, ${deposit.address}, ${deposit.friendly})
  `;
}
