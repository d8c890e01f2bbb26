// Refunds (POST/GET /v1/payments/{id}/refunds): money in a payment's deposit wallet that is not
// part of a completed payment's counted amount goes back to an address the merchant gives. A
// refund is an outgoing transfer (kind refund) planned with the payment row locked, so two
// refunds at once cannot take more than the refundable balance; the signer sends it.
import type { TonNetwork } from '../chain/addresses.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { KassaError, paymentNotFound, refundExceedsBalance, unusableDestination } from '../errors.ts';
import { checkDestination } from './destinations.ts';
import { decimalPlaces, fromBaseUnits, toBaseUnits } from '../money.ts';
import { enqueueWalletSend, outgoingRow, OUTGOING_COLUMNS, refundableBaseUnits, type OutgoingRow } from './outgoing.ts';

export interface RefundRequest {
  coin: string;
  amount: string;
  address: string;
}

/** Plans a refund in `tx` (the caller's transaction); throws the API's errors. Returns its row (src/presenters/refund.ts shows it). */
export async function createRefund(tx: Db, network: TonNetwork, storeId: string, paymentId: string, request: RefundRequest, now: Date): Promise<OutgoingRow> {
  const destination = await checkDestination(tx, request.address, network);
  if ('problem' in destination) throw unusableDestination(destination.problem);
  const payment = await tx.maybeOne(sql.type(z.object({ id: z.string(), deposit_address: z.string().nullable() }))`
    select p.id, d.address as deposit_address from payments p left join deposit_addresses d on d.payment_id = p.id
    where p.id = ${paymentId} and p.store_id = ${storeId}
    for update of p
  `);
  if (!payment) throw paymentNotFound();
  const coin = await tx.maybeOne(sql.type(z.object({ symbol: z.string(), decimals: z.number() }))`
    select symbol, decimals::int as decimals from coins where symbol = ${request.coin}
  `);
  if (!coin) throw new KassaError('invalid_coin', `${request.coin} is not a coin Kassa knows.`, { param: 'coin' });
  if (decimalPlaces(request.amount) > coin.decimals)
    throw new KassaError('invalid_amount', `${coin.symbol} has ${coin.decimals} decimals.`, { param: 'amount' });
  const amount = toBaseUnits(request.amount, coin.decimals);
  if (amount <= 0n) throw new KassaError('invalid_amount', 'amount must be positive.', { param: 'amount' });
  const refundable = payment.deposit_address === null ? 0n : await refundableBaseUnits(tx, payment.id, coin.symbol);
  if (amount > refundable) throw refundExceedsBalance(fromBaseUnits(refundable > 0n ? refundable : 0n, coin.decimals), coin.symbol);
  const row = await tx.one(sql.type(outgoingRow)`
    insert into outgoing_transfers (kind, reason, payment_id, store_id, from_address, to_address, to_address_given, coin_symbol, amount, amount_base_units, created_at, updated_at)
    values ('refund', 'refund', ${payment.id}, ${storeId}, ${payment.deposit_address!}, ${destination.raw}, ${request.address.trim()},
            ${coin.symbol}, ${request.amount}, ${amount.toString()}, ${sql.timestamp(now)}, ${sql.timestamp(now)})
    returning ${OUTGOING_COLUMNS}
  `);
  await enqueueWalletSend(tx, payment.deposit_address!);
  return row;
}

/** The payment's refunds, oldest first, or null when it is not the store's payment. */
export async function listRefunds(db: Db, storeId: string, paymentId: string): Promise<readonly OutgoingRow[] | null> {
  const found = await db.exists(sql.unsafe`select 1 from payments where id = ${paymentId} and store_id = ${storeId}`);
  if (!found) return null;
  return db.any(sql.type(outgoingRow)`
    select ${OUTGOING_COLUMNS} from outgoing_transfers where payment_id = ${paymentId} and kind = 'refund' order by created_at, id
  `);
}
