// Refunds from the treasury (CONTRACT §11, docs/API.md "Refund from the treasury"): a sale whose
// counted amount was swept to the store's treasury is refunded from there, signed by the merchant's
// own wallet — Kassa holds no key of the treasury. POST /v1/payments/{id}/refunds with
// `"from": "treasury"` plans a refund row (outgoing_transfers, source treasury) in state
// `awaiting_signature` carrying the message the wallet is asked to sign: TON to the customer with a
// text comment (the refund's reference), or a TEP-74 transfer to the treasury's jetton wallet whose
// forward_payload carries that comment. The chain reader watches the account that moves the money
// (the treasury; its jetton wallet for a jetton), confirms the refund when a transfer with its
// reference leaves (commands.ts confirmTreasuryRefund), and expires it when its validUntil passed
// unseen (expireTreasuryRefunds). The TON Connect request and the ton:// link are built here, pure.
import { Address, beginCell, Cell } from '@ton/core';
import { standardJettonWalletAddress, type TonNetwork } from '../chain/addresses.ts';
import { commentOf, parseJettonTransferRequest } from '../chain/detect.ts';
import { JETTON_TRANSFER_TON, jettonTransferBody, transferQueryId } from '../chain/jettonTransfer.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { sql, z, type Db } from '../db/pool.ts';
import { fieldBreaksRule, KassaError, paymentNotFound, refundExceedsBalance, tooManyDecimals, unusableDestination } from '../errors.ts';
import { decimalPlaces, fromBaseUnits, toBaseUnits } from '../money.ts';
import type { StorePayment } from '../payments/view.ts';
import type { RatePolicy } from '../rates/rates.ts';
import { newUuid } from '../uuid.ts';
import { checkDestination } from './destinations.ts';
import { OUTGOING_COLUMNS, outgoingRow, type OutgoingRow } from './outgoing.ts';
import { PAYER, payerOf, requestedAmount, type RefundRequest } from './refundRequest.ts';

/** How long the merchant has to sign a treasury refund (its TON Connect request's validUntil). */
export const TREASURY_REFUND_TTL_MS = 15 * 60_000;

/** nanoTON the customer receives with the jetton transfer_notification (> 0, so the comment reaches them). */
const JETTON_FORWARD_TON = 1n;

/** The comment a treasury refund's payload carries: how the chain reader recognises it, and what the customer's wallet shows. */
export const referenceOf = (refundId: string): string => `Kassa refund ${refundId}`;

const instant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

const treasuryPayment = z.object({
  id: z.string(),
  store_id: z.string(),
  currency: z.string(),
  coin_symbol: z.string().nullable(),
  exchange_rate: z.string().nullable(),
  status: z.string(),
  treasury: z.string().nullable(),
  counted: z.string(),
  swept: z.string(),
  swept_at: z.date().nullable(),
  refundable_until: z.date().nullable(),
  taken: z.string(),
});

/**
 * Plans a refund of a sale from its store's treasury, in `tx` (the caller's transaction, the
 * payment row locked so two at once cannot take more than the sale). What it may take: the part of
 * the sale's counted amount that went to the treasury (its sweep's amount), less the treasury
 * refunds of it awaiting a signature or confirmed. Throws the API's errors.
 */
export async function createTreasuryRefund(
  tx: Db,
  network: TonNetwork,
  storePayment: Pick<StorePayment, 'id' | 'store_id'>,
  request: RefundRequest,
  now: Date,
  policy: RatePolicy | null,
): Promise<OutgoingRow> {
  const payment = await tx.maybeOne(sql.type(treasuryPayment)`
    select p.id, p.store_id, p.currency, p.coin_symbol, p.exchange_rate::text as exchange_rate, p.status, s.treasury, p.refundable_until,
      coalesce(p.coin_amount_base_units, 0)::text as counted,
      coalesce((select sum(o.amount_base_units) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                and o.coin_symbol = p.coin_symbol and o.state <> 'failed'), 0)::text as swept,
      (select min(o.created_at) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment' and o.state <> 'failed') as swept_at,
      coalesce((select sum(o.amount_base_units) from outgoing_transfers o where o.payment_id = p.id and o.source = 'treasury'
                and o.state in ('awaiting_signature', 'confirmed')), 0)::text as taken
    from payments p join stores s on s.id = p.store_id
    where p.id = ${storePayment.id} and p.store_id = ${storePayment.store_id}
    for update of p
  `);
  if (!payment) throw paymentNotFound();
  if (payment.treasury === null)
    throw fieldBreaksRule(
      'from',
      'is "treasury" only for a store with a treasury address (`kassa store update ID --treasury ADDRESS`, or the dashboard\'s Settings)',
    );
  const coin = await tx.maybeOne(sql.type(z.object({ symbol: z.string(), decimals: z.number() }))`
    select symbol, decimals::int as decimals from coins where symbol = ${request.coin}
  `);
  if (!coin) throw new KassaError('invalid_coin', { param: 'coin' });
  if (payment.status !== 'completed' || payment.coin_symbol !== coin.symbol)
    throw fieldBreaksRule(
      'from',
      payment.status !== 'completed'
        ? `is "treasury" only for a completed payment's sale (this payment is ${payment.status}); other money is refunded from its deposit: leave out "from"`
        : `is "treasury" only for the sale's coin (${payment.coin_symbol}); other money is refunded from its deposit: leave out "from"`,
    );
  if (payment.swept_at === null) {
    const until = payment.refundable_until !== null ? ` (refundable from its deposit until ${instant(payment.refundable_until)})` : '';
    throw fieldBreaksRule('from', `is "treasury" once the sale was swept to the treasury; it is still in its deposit${until}: leave out "from"`);
  }
  const requested = await requestedAmount(tx, payment, coin, request, now, policy);
  const coinAmount = requested?.coinAmount ?? request.amount;
  if (decimalPlaces(coinAmount) > coin.decimals) throw tooManyDecimals('amount', coin.symbol, coin.decimals);
  const given = request.address.trim() === PAYER ? await payerOf(tx, payment.id, coin.symbol) : request.address;
  const destination = await checkDestination(tx, given, network);
  if ('problem' in destination) throw unusableDestination(destination.problem);
  const amount = toBaseUnits(coinAmount, coin.decimals);
  if (amount <= 0n) throw new KassaError('invalid_amount', { param: 'amount' });
  const swept = BigInt(payment.swept);
  const taken = BigInt(payment.taken);
  const available = swept - taken > 0n ? swept - taken : 0n;
  if (amount > available) {
    const units = (n: bigint) => `${fromBaseUnits(n, coin.decimals)} ${coin.symbol}`;
    const parts = [
      `at most ${units(available)} is refundable from the treasury`,
      `of the sale's counted ${units(BigInt(payment.counted))}, ${units(swept)} was swept to the treasury on ${instant(payment.swept_at)}` +
        (BigInt(payment.counted) > swept ? ' (the rest was refunded from its deposit, or paid its fees)' : ''),
    ];
    if (taken > 0n) parts.push(`${units(taken)} is taken by treasury refunds awaiting a signature or confirmed`);
    throw refundExceedsBalance(coin.symbol, `${parts.join('; ')}.`);
  }
  const treasury = Address.parse(payment.treasury);
  const customer = Address.parse(destination.raw);
  const id = newUuid();
  const reference = referenceOf(id);
  const comment = beginCell().storeUint(0, 32).storeStringTail(reference).endCell();
  let message: { address: string; amount: bigint; payload: Cell };
  if (coin.symbol === 'TON') message = { address: destination.raw, amount, payload: comment };
  else {
    const master = await tx.maybeOne(sql.type(z.object({ master_address: z.string(), wallet_code: z.instanceof(Buffer).nullable() }))`
      select master_address, wallet_code from jetton_masters where coin_symbol = ${coin.symbol} and network = ${network}
    `);
    if (!master?.wallet_code)
      throw fieldBreaksRule('coin', `has no standard jetton wallet Kassa can compute offline on ${network}: refund ${coin.symbol} from the treasury by hand`);
    const wallet = standardJettonWalletAddress(Address.parse(master.master_address), treasury, Cell.fromBoc(master.wallet_code)[0]!);
    message = {
      address: wallet.toRawString(),
      amount: JETTON_TRANSFER_TON,
      payload: jettonTransferBody({
        queryId: transferQueryId(id),
        amount,
        destination: customer,
        responseDestination: treasury,
        forwardTonAmount: JETTON_FORWARD_TON,
        forwardPayload: comment,
      }),
    };
  }
  const validUntil = new Date(Math.floor((now.getTime() + TREASURY_REFUND_TTL_MS) / 1000) * 1000);
  return tx.one(sql.type(outgoingRow)`
    insert into outgoing_transfers (id, kind, reason, source, payment_id, store_id, from_address, to_address, to_address_given, coin_symbol, amount,
                                    amount_base_units, fee_reserved_base_units, state, valid_until, watch_account, reference, request_address,
                                    request_amount_base_units, request_payload, requested_amount, requested_currency, exchange_rate,
                                    exchange_rate_source, created_at, updated_at)
    values (${id}, 'refund', 'refund', 'treasury', ${payment.id}, ${payment.store_id}, ${treasury.toRawString()}, ${destination.raw}, ${given.trim()},
            ${coin.symbol}, ${fromBaseUnits(amount, coin.decimals)}, ${amount.toString()}, 0, 'awaiting_signature', ${sql.timestamp(validUntil)},
            ${coin.symbol === 'TON' ? treasury.toRawString() : message.address}, ${reference}, ${message.address}, ${message.amount.toString()},
            ${sql.binary(message.payload.toBoc())}, ${requested?.requested.amount ?? null}, ${requested?.requested.currency ?? null},
            ${requested?.requested.rate ?? null}, ${requested?.requested.rateSource ?? null}, ${sql.timestamp(now)}, ${sql.timestamp(now)})
    returning ${OUTGOING_COLUMNS}
  `);
}

// ---- what the merchant's wallet is asked to sign (pure) ----------------------------------------

/** TON Connect chain ids (CHAIN.MAINNET / CHAIN.TESTNET); the sandbox has none. */
const CHAIN_ID: Record<TonNetwork, string | null> = { mainnet: '-239', testnet: '-3', sandbox: null };

export interface TreasuryRequest {
  /** A TON Connect `sendTransaction` request (amounts in nanoTON, payload a base64 BoC). */
  tonconnect: { validUntil: number; network?: string; from: string; messages: Array<{ address: string; amount: string; payload: string }> };
  /** The same transfer as a ton:// link (bin: the payload, base64url; exp: validUntil). */
  link: string;
}

/**
 * The request of a treasury refund: one message from the treasury (`from`, so a wallet other than
 * the treasury refuses it), bounceable to the treasury's jetton wallet, non-bounceable to the
 * customer (a wallet that may never have been deployed). Null for any other refund.
 */
export function treasuryRequest(row: OutgoingRow, network: TonNetwork): TreasuryRequest | null {
  if (row.source !== 'treasury' || row.request_address === null || row.request_amount_base_units === null || row.request_payload === null) return null;
  const jetton = row.coin_symbol !== 'TON';
  const address = Address.parse(row.request_address).toString({ urlSafe: true, bounceable: jetton, testOnly: network === 'testnet' });
  const payload = Cell.fromBoc(row.request_payload)[0]!.toBoc();
  const validUntil = Math.floor(row.valid_until!.getTime() / 1000);
  const chain = CHAIN_ID[network];
  const from = Address.parse(row.from_address);
  return {
    tonconnect: {
      validUntil,
      ...(chain !== null ? { network: chain } : {}),
      from: from.toRawString(),
      messages: [{ address, amount: row.request_amount_base_units, payload: payload.toString('base64') }],
    },
    link: `ton://transfer/${address}?amount=${row.request_amount_base_units}&bin=${payload.toString('base64url')}&exp=${validUntil}`,
  };
}

// ---- the chain reader's side (pure) -------------------------------------------------------------

/** A treasury refund as the chain reader matches it (outgoing_transfers, source treasury). */
export const treasuryWatchRow = z.object({
  id: z.string(),
  from_address: z.string(),
  to_address: z.string(),
  watch_account: z.string(),
  coin_symbol: z.string(),
  amount_base_units: z.string(),
  reference: z.string(),
});
export type TreasuryWatch = z.infer<typeof treasuryWatchRow>;

/** What left the treasury for one refund: its coin's amount, the TON it cost the treasury (fees; a jetton: the TON its message carried). */
export interface TreasuryTransferSeen {
  refundId: string;
  sent: bigint;
  fee: bigint;
}

/**
 * Whether `tx` (on a watched account) moved money out for one of `refunds` (those watching that
 * account), decided without I/O. TON: the treasury's transaction succeeded and sent its customer a
 * message whose comment is the refund's reference. A jetton: the treasury's jetton wallet ran a
 * `transfer` from the treasury (its owner), to the customer, whose forward_payload comment is the
 * reference, and succeeded (the jettons left). The amount sent is what the chain says, whatever
 * the refund asked (books = chain).
 */
export function treasuryTransferSeen(tx: ChainTransaction, refunds: readonly TreasuryWatch[]): TreasuryTransferSeen | null {
  const succeeded = !tx.compute.skipped && tx.compute.success && tx.compute.exitCode === 0 && tx.actionSuccess !== false;
  if (!succeeded) return null;
  for (const refund of refunds) {
    if (refund.watch_account !== tx.account) continue;
    if (refund.coin_symbol === 'TON') {
      for (const message of tx.outMessages ?? []) {
        if (message.destination !== refund.to_address || commentOf(message.body) !== refund.reference) continue;
        return { refundId: refund.id, sent: message.value, fee: (tx.totalFees ?? 0n) + message.fwdFee };
      }
      continue;
    }
    const inMessage = tx.inMessage;
    if (inMessage === null || inMessage.source !== refund.from_address || inMessage.bounced || tx.aborted) continue;
    const transfer = parseJettonTransferRequest(inMessage.body);
    if (transfer === null || transfer.destination !== refund.to_address || transfer.comment !== refund.reference) continue;
    if ((tx.outMessages ?? []).length === 0) continue;
    return { refundId: refund.id, sent: transfer.amount, fee: inMessage.value };
  }
  return null;
}
