// Deposit addresses: one wallet per payment reaching pending, derived offline from the master key.
import crypto from 'node:crypto';
import { depositWallet } from '../chain/addresses.ts';
import type { Config } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';

const masterKeys = new WeakMap<object, Promise<Buffer>>();

async function loadMasterKey(db: Db, config: Pick<Config, 'masterKey' | 'tonNetwork'>): Promise<Buffer> {
  if (config.masterKey) return Buffer.from(config.masterKey, 'hex');
  if (config.tonNetwork !== 'sandbox') throw new Error('KASSA_MASTER_KEY is required off sandbox');
  // Sandbox only: a key generated into the database on first use and kept there.
  await db.query(sql.typeAlias('void')`
    insert into service_secrets (name, secret) values ('deposit_master_key', ${sql.binary(crypto.randomBytes(32))})
    on conflict (name) do nothing
  `);
  return db.oneFirst(sql.type(z.object({ secret: z.instanceof(Buffer) }))`select secret from service_secrets where name = 'deposit_master_key'`);
}

/** The deposit master key, loaded once per pool. */
export function masterKey(db: Db, config: Pick<Config, 'masterKey' | 'tonNetwork'>): Promise<Buffer> {
  let key = masterKeys.get(db);
  if (!key) {
    key = loadMasterKey(db, config);
    key.catch(() => masterKeys.delete(db));
    masterKeys.set(db, key);
  }
  return key;
}

/** Assigns the next deposit wallet to a payment (inside the caller's transaction). */
export async function assignDepositAddress(tx: Db, key: Buffer, paymentId: string, network: Config['tonNetwork']): Promise<{ address: string; friendly: string; index: number }> {
  const index = Number(await tx.oneFirst(sql.type(z.object({ index: z.string() }))`select nextval('deposit_address_index_seq')::text as index`));
  const wallet = depositWallet(key, index, network);
  await tx.query(sql.typeAlias('void')`
    insert into deposit_addresses (payment_id, derivation_index, network, address, address_friendly)
    values (${paymentId}, ${index}, ${network}, ${wallet.raw}, ${wallet.friendly})
  `);
  return { address: wallet.raw, friendly: wallet.friendly, index };
}
