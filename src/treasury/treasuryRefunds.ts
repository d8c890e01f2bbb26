// Refunds from the treasury (CONTRACT §11, docs/API.md "Refund from the treasury"): a sale whose
// counted amount was swept to the store's treasury is refunded from there, signed by the merchant's
// own wallet — Kassa holds no key of the treasury. POST /v1/payments/{id}/refunds with
// `"from": "treasury"` plans a refund row (outgoing_transfers, source treasury) in state
// `awaiting_signature` carrying the message the wallet is asked to sign: TON to the customer with a
// text comment (the refund's reference), or a TEP-74 transfer to the treasury's jetton wallet whose
// forward_payload carries that comment. The chain reader watches the account that moves the money
// (the treasury; its jetton wallet for a jetton), confirms the refund when a transfer with its
// reference leaves (treasuryConfirmations.ts confirmTreasuryRefund), and expires it when its validUntil passed
// unseen (expireTreasuryRefunds). The TON Connect request and the ton:// link are built here, pure.
import { Address, beginCell, Cell } from '@ton/core';
import { standardJettonWalletAddress, type TonNetwork } from '../chain/addresses.ts';
import { LATE_COMMIT_MARGIN_MS } from '../chain/clock.ts';
import { commentOf, parseJettonTransferRequest } from '../chain/detect.ts';
import { JETTON_TRANSFER_TON, jettonTransferBody, transferQueryId } from '../chain/jettonTransfer.ts';
import type { ChainTransaction } from '../chain/transactions.ts';
import { sql, z, type Db } from '../db/pool.ts';
import {
  fieldBreaksRule,
  KassaError,
  paymentNotFound,
  refundExceedsBalance,
  tooManyDecimals,
  treasuryJettonWalletUnknown,
  unusableDestination,
} from '../errors.ts';
import { decimalPlaces, fromBaseUnits, toBaseUnits } from '../money.ts';
import type { StorePayment } from '../payments/view.ts';
import type { RatePolicy } from '../rates/rates.ts';
import { newUuid } from '../uuid.ts';
import { checkDestination } from './destinations.ts';
import { OUTGOING_COLUMNS, outgoingRow, type OutgoingRow, type RequestedAmount } from './outgoing.ts';
import { OUTGOING_STATES } from './transitions.ts';
import { PAYER, payerOf, requestedAmount, type RefundRequest } from './refundRequest.ts';

/** How long the merchant has to sign a treasury refund (its TON Connect request's validUntil). */
export const TREASURY_REFUND_TTL_MS = 15 * 60_000;

/**
 * The longest lifetime a wallet gives the message it signs for a TON Connect request, counted from
 * the request's validUntil: Tonkeeper signs with its own time + 300 s whatever validUntil asked,
 * MyTonWallet with the request's (600 s when none). A request signed just before its validUntil
 * can land this long after it.
 */
export const WALLET_LONGEST_LIFETIME_MS = 600_000;

/**
 * Until when a treasury refund's request can still land, so its amount stays taken: validUntil +
 * the longest wallet lifetime + the late-commit margin. Only then is it expired (its amount may be
 * asked again); the dashboard offers no new request for it before.
 */
export const heldUntil = (validUntil: Date): Date => new Date(validUntil.getTime() + WALLET_LONGEST_LIFETIME_MS + LATE_COMMIT_MARGIN_MS);

/** Asks a jetton master for an owner's jetton wallet (get_wallet_address; checkout/jettonWallets.ts remembers the answers). */
export type JettonWalletOf = (master: Address, owner: Address) => Promise<Address>;

/** nanoTON the customer receives with the jetton transfer_notification (> 0, so the comment reaches them). */
const JETTON_FORWARD_TON = 1n;

/** The comment a treasury refund's payload carries: how the chain reader recognises it, and what the customer's wallet shows. */
const referenceOf = (refundId: string): string => `Kassa refund ${refundId}`;

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
  /** treasury: the payment was paid to the treasury itself (issue 43): all its money of a coin is there, no sweep. */
  settlement: z.enum(['deposit', 'treasury']),
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
  walletOf: JettonWalletOf | null = null,
): Promise<OutgoingRow> {
  const payment = await tx.maybeOne(sql.type(treasuryPayment)`
    select p.id, p.store_id, p.currency, p.coin_symbol, p.exchange_rate::text as exchange_rate, p.status, p.refundable_until, p.settlement,
      -- Paid to the treasury itself: the treasury it was paid to, and everything of the coin booked on it reached it when it was made.
      case when p.settlement = 'treasury' then p.settlement_address else s.treasury end as treasury,
      coalesce(p.coin_amount_base_units, 0)::text as counted,
      case when p.settlement = 'treasury'
        then coalesce((select sum(t.amount_base_units) from transfers t where t.payment_id = p.id and t.coin_symbol = ${request.coin}
                       and t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0)::text
        else coalesce((select sum(o.amount_base_units) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                       and o.coin_symbol = p.coin_symbol and o.state <> 'failed'), 0)::text end as swept,
      case when p.settlement = 'treasury'
        then (select min(t.chain_time) from transfers t where t.payment_id = p.id and t.coin_symbol = ${request.coin}
              and t.effect not in ('not_credited', 'not_counted', 'unknown_token'))
        else (select min(o.created_at) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment' and o.state <> 'failed') end as swept_at,
      (${TREASURY_TAKEN_SQL})::text as taken
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
  const settledThere = payment.settlement === 'treasury';
  if (settledThere && payment.swept_at === null) throw refundExceedsBalance(coin.symbol, `no ${coin.symbol} of this payment reached the treasury.`);
  if (!settledThere && (payment.status !== 'completed' || payment.coin_symbol !== coin.symbol))
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
      settledThere
        ? `${units(swept)} of this payment was paid to the treasury itself`
        : `of the sale's counted ${units(BigInt(payment.counted))}, ${units(swept)} was swept to the treasury on ${instant(payment.swept_at!)}` +
          (BigInt(payment.counted) > swept ? ' (the rest was refunded from its deposit, or paid its fees)' : ''),
    ];
    if (taken > 0n)
      parts.push(
        `${units(taken)} is taken by treasury refunds awaiting a signature (held ${(WALLET_LONGEST_LIFETIME_MS + LATE_COMMIT_MARGIN_MS) / 1000} s past their validUntil: a wallet may sign its own later lifetime) or paid`,
      );
    throw refundExceedsBalance(coin.symbol, `${parts.join('; ')}.`);
  }
  return planTreasuryRefund(
    tx,
    network,
    {
      owner: { paymentId: payment.id },
      storeId: payment.store_id,
      treasury: payment.treasury,
      coin: coin.symbol,
      decimals: coin.decimals,
      amount,
      destination: destination.raw,
      given: given.trim(),
      requested: requested?.requested ?? null,
    },
    now,
    walletOf,
  );
}

/** Whose money a treasury refund sends back: a payment's, or an unmatched transfer's (issue 43). */
type RefundOwner = { paymentId: string } | { unmatchedId: string; storeId: string };

/** SQL over `outgoing_transfers`: the refunds of `owner` (unmatched money's, of its store only). */
const ownedBy = (owner: RefundOwner) =>
  'paymentId' in owner
    ? sql.fragment`payment_id = ${owner.paymentId}`
    : sql.fragment`unmatched_transfer_id = ${owner.unmatchedId} and store_id = ${owner.storeId}`;

/**
 * Writes a treasury refund decided by its caller (createTreasuryRefund for a sale, createUnmatchedRefund
 * for unmatched money), in its transaction: the message the merchant's wallet is asked to sign — TON
 * to the destination with the refund's reference as a text comment, or a TEP-74 transfer to the
 * treasury's jetton wallet whose forward_payload carries it — and the row awaiting its signature.
 */
export async function planTreasuryRefund(
  tx: Db,
  network: TonNetwork,
  plan: {
    owner: RefundOwner;
    storeId: string;
    /** The treasury (raw or user-friendly). */
    treasury: string;
    coin: string;
    decimals: number;
    amount: bigint;
    /** Raw. */
    destination: string;
    /** The destination as the merchant gave it. */
    given: string;
    requested: RequestedAmount | null;
  },
  now: Date,
  walletOf: JettonWalletOf | null,
): Promise<OutgoingRow> {
  const { amount } = plan;
  const treasury = Address.parse(plan.treasury);
  const customer = Address.parse(plan.destination);
  const id = newUuid();
  const reference = referenceOf(id);
  const comment = beginCell().storeUint(0, 32).storeStringTail(reference).endCell();
  let message: { address: string; amount: bigint; payload: Cell };
  if (plan.coin === 'TON') message = { address: plan.destination, amount, payload: comment };
  else {
    const master = await tx.maybeOne(sql.type(z.object({ master_address: z.string(), wallet_code: z.instanceof(Buffer).nullable() }))`
      select master_address, wallet_code from jetton_masters where coin_symbol = ${plan.coin} and network = ${network}
    `);
    if (!master) throw new KassaError('invalid_coin', { param: 'coin' });
    const wallet = await treasuryJettonWallet(
      { master: Address.parse(master.master_address), walletCode: master.wallet_code, treasury, coin: plan.coin },
      walletOf,
    );
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
  const paymentId = 'paymentId' in plan.owner ? plan.owner.paymentId : null;
  const unmatchedId = 'unmatchedId' in plan.owner ? plan.owner.unmatchedId : null;
  return tx.one(sql.type(outgoingRow)`
    insert into outgoing_transfers (id, kind, reason, source, payment_id, unmatched_transfer_id, store_id, from_address, to_address, to_address_given,
                                    coin_symbol, amount, amount_base_units, fee_reserved_base_units, state, valid_until, watch_account, reference,
                                    request_address, request_amount_base_units, request_payload, requested_amount, requested_currency, exchange_rate,
                                    exchange_rate_source, created_at, updated_at)
    values (${id}, 'refund', 'refund', 'treasury', ${paymentId}, ${unmatchedId}, ${plan.storeId}, ${treasury.toRawString()}, ${plan.destination},
            ${plan.given}, ${plan.coin}, ${fromBaseUnits(amount, plan.decimals)}, ${amount.toString()}, 0, 'awaiting_signature', ${sql.timestamp(validUntil)},
            ${plan.coin === 'TON' ? treasury.toRawString() : message.address}, ${reference}, ${message.address}, ${message.amount.toString()},
            ${sql.binary(message.payload.toBoc())}, ${plan.requested?.amount ?? null}, ${plan.requested?.currency ?? null},
            ${plan.requested?.rate ?? null}, ${plan.requested?.rateSource ?? null}, ${sql.timestamp(now)}, ${sql.timestamp(now)})
    returning ${OUTGOING_COLUMNS}
  `);
}

/**
 * What a treasury refund takes of its sale (SQL over `p`, the payment): the refunds awaiting a
 * signature (held until heldUntil), and what the confirmed ones and their repeats moved.
 */
const TREASURY_TAKEN_SQL = sql.fragment`
  coalesce((select sum(case when o.state = 'confirmed' then coalesce(o.sent_amount_base_units, o.amount_base_units) else o.amount_base_units end)
            from outgoing_transfers o where o.payment_id = p.id and o.source = 'treasury' and o.state in ('awaiting_signature', 'confirmed')), 0)
  + coalesce((select sum(r.amount_base_units) from treasury_refund_repeats r join outgoing_transfers o on o.id = r.transfer_id where o.payment_id = p.id), 0)`;

/**
 * What a refund from the treasury may take of a sale now, in its coin's base units (the sale's
 * sweep to the treasury less what treasury refunds took, as createTreasuryRefund decides it), or
 * null when the sale cannot be refunded from the treasury (no treasury, not completed, not swept).
 */
export async function treasuryRefundable(db: Db, paymentId: string): Promise<{ coin: string; decimals: number; available: bigint } | null> {
  const row = await db.maybeOne(sql.type(z.object({ coin: z.string(), decimals: z.number(), swept: z.string().nullable(), taken: z.string() }))`
    select p.coin_symbol as coin, c.decimals::int as decimals,
      (select sum(o.amount_base_units) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
       and o.coin_symbol = p.coin_symbol and o.state <> 'failed')::text as swept,
      (${TREASURY_TAKEN_SQL})::text as taken
    from payments p join stores s on s.id = p.store_id join coins c on c.symbol = p.coin_symbol
    where p.id = ${paymentId} and p.status = 'completed' and s.treasury is not null
  `);
  if (!row || row.swept === null) return null;
  const available = BigInt(row.swept) - BigInt(row.taken);
  return { coin: row.coin, decimals: row.decimals, available: available > 0n ? available : 0n };
}

/**
 * What left the treasury for a sale (its confirmed treasury refunds and their repeats, as the
 * chain moved them) against what was swept to it, in the sale's coin's base units.
 */
export async function treasurySaleMoved(db: Db, paymentId: string): Promise<{ moved: bigint; swept: bigint }> {
  const row = await db.one(sql.type(z.object({ moved: z.string(), swept: z.string() }))`
    select
      (coalesce((select sum(coalesce(o.sent_amount_base_units, o.amount_base_units)) from outgoing_transfers o
                 where o.payment_id = p.id and o.source = 'treasury' and o.state = 'confirmed'), 0)
       + coalesce((select sum(r.amount_base_units) from treasury_refund_repeats r join outgoing_transfers o on o.id = r.transfer_id where o.payment_id = p.id), 0))::text as moved,
      -- Paid to the treasury itself (issue 43): what reached it is every credited transfer of the payment's coin booked on it.
      case when p.settlement = 'treasury'
        then coalesce((select sum(t.amount_base_units) from transfers t where t.payment_id = p.id and t.coin_symbol = p.coin_symbol
                       and t.effect not in ('not_credited', 'not_counted', 'unknown_token')), 0)::text
        else coalesce((select sum(o.amount_base_units) from outgoing_transfers o where o.payment_id = p.id and o.kind = 'sweep' and o.reason = 'payment'
                       and o.coin_symbol = p.coin_symbol and o.state <> 'failed'), 0)::text end as swept
    from payments p where p.id = ${paymentId}
  `);
  return { moved: BigInt(row.moved), swept: BigInt(row.swept) };
}

/**
 * What left the treasury sending an unmatched transfer back (its confirmed refunds and their
 * repeats, as the chain moved them) against the transfer's amount, in its coin's base units —
 * treasurySaleMoved's measure for unmatched money.
 */
export async function unmatchedMoved(db: Db, unmatchedId: string): Promise<{ moved: bigint; swept: bigint }> {
  const row = await db.one(sql.type(z.object({ moved: z.string(), swept: z.string() }))`
    select
      (coalesce((select sum(coalesce(o.sent_amount_base_units, o.amount_base_units)) from outgoing_transfers o
                 where o.unmatched_transfer_id = u.id and o.state = 'confirmed'), 0)
       + coalesce((select sum(r.amount_base_units) from treasury_refund_repeats r join outgoing_transfers o on o.id = r.transfer_id
                   where o.unmatched_transfer_id = u.id), 0))::text as moved,
      u.amount_base_units::text as swept
    from unmatched_transfers u where u.id = ${unmatchedId}
  `);
  return { moved: BigInt(row.moved), swept: BigInt(row.swept) };
}

/**
 * The treasury's jetton wallet of a coin: computed offline when the master's standard wallet code
 * is known (jetton_masters.wallet_code), else the one an earlier treasury refund of that treasury
 * asked of the master (get_wallet_address; the lookup remembers its answers) — as deposits'
 * are: mainnet and testnet masters have no wallet_code (USDT's wallets are not the standard layout).
 */
async function treasuryJettonWallet(
  args: { master: Address; walletCode: Buffer | null; treasury: Address; coin: string },
  walletOf: JettonWalletOf | null,
): Promise<Address> {
  if (args.walletCode) return standardJettonWalletAddress(args.master, args.treasury, Cell.fromBoc(args.walletCode)[0]!);
  if (!walletOf)
    throw fieldBreaksRule('coin', `has no jetton wallet of the treasury Kassa could ask its master for: refund ${args.coin} from the treasury by hand`);
  try {
    return await walletOf(args.master, args.treasury);
  } catch {
    throw treasuryJettonWalletUnknown(args.coin);
  }
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
interface TreasuryTransferSeen {
  refundId: string;
  sent: bigint;
  fee: bigint;
  /** Paid from another account than the treasury (the ton:// link carries no sender): that account, raw. */
  paidFrom?: string;
}

/**
 * Whether `tx` (on a watched account) moved money out for one of `refunds` (those watching that
 * account), decided without I/O. TON: the treasury's transaction succeeded and sent its customer a
 * message whose comment is the refund's reference. A jetton: the treasury's jetton wallet ran a
 * `transfer` from the treasury (its owner), to the customer, whose forward_payload comment is the
 * reference, and succeeded (the jettons left). The amount sent is what the chain says, whatever
 * the refund asked (books = chain). TON paid through the refund's ton:// link from another account
 * than the treasury: seen on the customer's side (a transaction of `to_address` whose incoming
 * message carries the reference, kept there); the treasury paid no fee of it.
 */
export function treasuryTransferSeen(tx: ChainTransaction, refunds: readonly TreasuryWatch[]): TreasuryTransferSeen | null {
  // The customer's wallet may never have been deployed (its compute phase skipped): the value is credited all the same.
  const succeeded = !tx.compute.skipped && tx.compute.success && tx.compute.exitCode === 0 && tx.actionSuccess !== false;
  for (const refund of refunds) {
    if (refund.coin_symbol === 'TON' && refund.to_address === tx.account && refund.watch_account !== tx.account) {
      const paid = tx.inMessage;
      if (paid === null || paid.bounced || paid.source === null || paid.source === refund.from_address || tx.bounce === 'ok') continue;
      if (commentOf(paid.body) !== refund.reference || paid.value <= 0n) continue;
      return { refundId: refund.id, sent: paid.value, fee: 0n, paidFrom: paid.source };
    }
    if (!succeeded || refund.watch_account !== tx.account) continue;
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

/**
 * Whether a treasury refund's request is in a wallet now (issue 44 §1): a page recorded handing it
 * over (request_sent_at) and it can still land (before heldUntil). No page offers another request then.
 */
export const requestHeld = (row: Pick<OutgoingRow, 'request_sent_at' | 'valid_until'>, now: Date): boolean =>
  row.request_sent_at !== null && row.valid_until !== null && now < heldUntil(row.valid_until);

/** What recording a treasury refund's request as handed to a wallet answered. */
export type RequestRecorded =
  | { outcome: 'recorded'; heldUntil: Date }
  | { outcome: 'held'; sentAt: Date; heldUntil: Date }
  | { outcome: 'closed'; state: OutgoingRow['state'] }
  | { outcome: 'not_found' };

const requestState = z.object({
  state: z.enum(OUTGOING_STATES),
  valid_until: z.date().nullable(),
  request_sent_at: z.date().nullable(),
});

/**
 * Records that a page hands refund `refundId` (of `owner`: a payment, or unmatched money) to a wallet, before it does: one
 * conditional update, so of two pages (two browsers, two devices) the first wins and the second is
 * told the request is already in a wallet and until when it can land. Only a refund awaiting its
 * signature, still signable (before validUntil), and held by no wallet is recorded.
 */
export async function recordRequestSent(db: Db, owner: RefundOwner, refundId: string, now: Date): Promise<RequestRecorded> {
  const recorded = await db.maybeOne(sql.type(z.object({ valid_until: z.date() }))`
    update outgoing_transfers set request_sent_at = ${sql.timestamp(now)}
    where id = ${refundId} and ${ownedBy(owner)} and source = 'treasury' and state = 'awaiting_signature'
      and valid_until > ${sql.timestamp(now)}
      and (request_sent_at is null or valid_until + make_interval(secs => ${(WALLET_LONGEST_LIFETIME_MS + LATE_COMMIT_MARGIN_MS) / 1000}) <= ${sql.timestamp(now)})
    returning valid_until`);
  if (recorded) return { outcome: 'recorded', heldUntil: heldUntil(recorded.valid_until) };
  const row = await db.maybeOne(sql.type(requestState)`
    select state, valid_until, request_sent_at from outgoing_transfers
    where id = ${refundId} and ${ownedBy(owner)} and source = 'treasury'`);
  if (!row) return { outcome: 'not_found' };
  if (row.state === 'awaiting_signature' && requestHeld(row, now))
    return { outcome: 'held', sentAt: row.request_sent_at!, heldUntil: heldUntil(row.valid_until!) };
  return { outcome: 'closed', state: row.state };
}

/**
 * The wallet itself declined refund `refundId`'s request (TON Connect's UserRejectsError): nothing of
 * it can be signed any more, so it is held no longer and may be asked again. True when it was held.
 */
export async function releaseRequest(db: Db, owner: RefundOwner, refundId: string): Promise<boolean> {
  const released = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    update outgoing_transfers set request_sent_at = null
    where id = ${refundId} and ${ownedBy(owner)} and source = 'treasury' and state = 'awaiting_signature' and request_sent_at is not null
    returning id`);
  return released !== null;
}
