// Recovery: what a person needs to move a deposit's money by hand with a standard wallet tool
// (`kassa deposits export --payment ID`), checked against the derivation before it is printed.
import { DERIVATIONS, depositKeyPair, derivedWallet, type Derivation } from '../chain/addresses.ts';
import type { Config } from '../config.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { depositPublicKey, masterKey } from './deposit.ts';
import { FormProblem } from '../errors.ts';
import { isUuid } from '../uuid.ts';

interface DepositExport {
  paymentId: string;
  /** Non-bounceable user-friendly form for the network. */
  address: string;
  rawAddress: string;
  network: Config['tonNetwork'];
  /** 'v4r2' or 'v5r1' (wallet contract, workchain 0). */
  walletVersion: 'v4r2' | 'v5r1';
  derivation: Derivation;
  /** The wallet id as stored in the wallet (v4r2: uint32 subwallet id; v5r1: int32). */
  walletId: number;
  /** v5r1: walletId = { networkGlobalId, context } for @ton/ton's WalletContractV5R1.create; null for v4r2. */
  networkGlobalId: number | null;
  context: number | null;
  publicKey: string;
  derivationIndex: number;
  /** Only with --include-secret: the Ed25519 private key's 32-byte seed (hex), @ton/crypto keyPairFromSeed. */
  privateKey?: string;
}

const depositRow = z.object({
  payment_id: z.string(),
  derivation_index: z.string(),
  network: z.enum(['mainnet', 'testnet', 'sandbox']),
  address: z.string(),
  derivation: z.string(),
});

export async function exportDeposit(
  db: Db,
  config: Pick<Config, 'masterKey' | 'depositPublicKey' | 'tonNetwork'>,
  paymentId: string,
  includeSecret: boolean,
): Promise<DepositExport> {
  const row = isUuid(paymentId)
    ? await db.maybeOne(sql.type(depositRow)`
        select payment_id, derivation_index::text as derivation_index, network, address, derivation
        from deposit_addresses where payment_id = ${paymentId}
      `)
    : null;
  if (!row) throw new FormProblem(`payment "${paymentId}" has no deposit address (unknown payment, or no method chosen yet)`);
  if (row.network !== config.tonNetwork) {
    throw new FormProblem(`payment "${paymentId}" was paid on ${row.network}; this configuration is for ${config.tonNetwork}`);
  }
  const derivation = DERIVATIONS.find((d) => d === row.derivation);
  if (!derivation) throw new FormProblem(`unknown derivation "${row.derivation}"`);
  let secret: Buffer | null = null;
  let publicKey: Buffer;
  if (includeSecret) {
    const pair = depositKeyPair(await masterKey(db, config));
    secret = pair.secretKey.subarray(0, 32);
    publicKey = pair.publicKey;
  } else {
    publicKey = await depositPublicKey(db, config);
  }
  const wallet = derivedWallet(publicKey, Number(row.derivation_index), row.network, derivation);
  if (wallet.raw !== row.address) {
    throw new FormProblem(
      `the configured deposit key does not derive payment "${paymentId}"'s address ${row.address}: wrong KASSA_MASTER_KEY / KASSA_DEPOSIT_PUBLIC_KEY`,
    );
  }
  return {
    paymentId: row.payment_id,
    address: wallet.friendly,
    rawAddress: wallet.raw,
    network: row.network,
    walletVersion: wallet.walletVersion,
    derivation,
    walletId: wallet.walletId,
    networkGlobalId: wallet.networkGlobalId,
    context: wallet.context,
    publicKey: wallet.publicKey,
    derivationIndex: wallet.index,
    ...(secret ? { privateKey: secret.toString('hex') } : {}),
  };
}
