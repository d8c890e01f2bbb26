// How money goes out — read this file, signer.ts and confirmations.ts (docs/ARCHITECTURE.md, Money out):
//   1. Planned: a planner writes the transfer `planned` (outgoing.ts planOutgoing), in the transaction
//      that decided it, with its wallet's signer job (outgoing__send): sweeps.ts (a sale's counted
//      amount, held money, a deposit's final sweep), refunds.ts (the merchant's refund, from the API or
//      the dashboard), gasTopUps.ts (the TON a jetton transfer needs, from the gas wallet). A refund from the
//      treasury is planned `awaiting_signature` (treasuryRefunds.ts): the merchant's wallet signs it.
//   2. Signed: the signer (signer.ts: one job per wallet, one message at a time, the only user of the
//      spending key) reads the books and the chain, asks whatToSend.ts (pure), then signs, records
//      (`sent`) and broadcasts; its state changes are signerCommands.ts. The last movement out of a
//      deposit is one closing message that pays every owner: all of it is closing.ts.
//   3. Confirmed: the chain reader sees the wallet's transaction and confirms or fails what it carried
//      (confirmations.ts; a treasury refund's: treasuryConfirmations.ts). A jetton transfer is told
//      to the store once its destination's jetton wallet took it.
// Every change of state: lock the row, ask outgoingTransition (below), write what it says through
// writeTransition.ts — which tells the store's webhook endpoints of a refund or sweep that ended
// (events.ts) in the same transaction. OUTGOING_STATE_RULES says who enters and leaves each state.
//
// outgoingTransition is the one function that decides every state change of an outgoing transfer
// (docs/OPERATIONS.md, Money out). Pure: no I/O, no clock of its own — `now` is given.

export const OUTGOING_STATES = ['planned', 'sent', 'confirmed', 'failed', 'awaiting_signature', 'expired'] as const;
export type OutgoingState = (typeof OUTGOING_STATES)[number];

/** Who enters a state, who moves a transfer out of it, and whether it is final. */
interface OutgoingStateRule {
  /** The command (and its caller) that puts a transfer in this state. */
  enteredBy: string;
  /** The commands (and their callers) that move it out. */
  leftBy: string;
  /** The events that move it to another state (outgoingTransition; test/treasury/transitions.test.ts checks them). */
  exits: ReadonlyArray<OutgoingEvent['type']>;
  /** The end the store is told (refund./sweep.confirmed or .failed): only the chain's late word, in `leftBy`, moves it again. */
  final: boolean;
}

/**
 * Each state of an outgoing transfer (River's rivertype.JobState): what it means, and in one line
 * each who enters it, who moves it out and whether it is final. The commands named are the only
 * writers of a state (through writeTransition.ts); test/treasury/transitions.test.ts holds `exits`
 * to outgoingTransition.
 */
export const OUTGOING_STATE_RULES = {
  /** Waiting for the signer (a wallet signs one message at a time, in order); a message that expired unseen comes back here to be signed afresh. */
  planned: {
    enteredBy: 'a planner (outgoing.ts planOutgoing), or the signer (signerCommands.ts expireUnseen)',
    leftBy: 'the signer (signerCommands.ts recordSigned, failUnsendable); the reader (confirmations.ts confirmOutgoing, supersedeReplans)',
    exits: ['signed', 'confirmed', 'superseded', 'failed_on_chain', 'not_sendable'],
    final: false,
  },
  /** Signed, recorded and broadcast: its message is in flight until the chain reader sees it or the chain is read past its valid_until and the margin. */
  sent: {
    enteredBy: 'the signer (signerCommands.ts recordSigned)',
    leftBy: 'the reader (confirmations.ts confirmOutgoing, supersedeReplans); the signer (signerCommands.ts expireUnseen)',
    exits: ['expired_unseen', 'confirmed', 'superseded', 'failed_on_chain'],
    final: false,
  },
  /** The money left the wallet (a jetton transfer out of a deposit is told to the store only once its destination's jetton wallet took it). */
  confirmed: {
    enteredBy: 'the reader (confirmations.ts confirmOutgoing; treasuryConfirmations.ts confirmTreasuryRefund; closing.ts bookCarriedMoney)',
    leftBy:
      'the reader, a jetton transfer refused or bounced (confirmations.ts jettonTransferRefused, jettonTransferBounced; treasuryConfirmations.ts treasuryJettonBounced)',
    exits: ['refused_by_jetton_wallet', 'bounced_at_destination'],
    final: true,
  },
  /** The money did not leave, or came back (failure_reason, failure_kind; a transient failure of a sweep is planned again as a new transfer). */
  failed: {
    enteredBy: 'the signer (signerCommands.ts failUnsendable, expireUnseen); the reader (confirmations.ts, treasuryConfirmations.ts)',
    leftBy: 'the reader, a message of it landing late (confirmations.ts confirmOutgoing)',
    exits: ['confirmed'],
    final: true,
  },
  /** A refund from the treasury, waiting for the merchant's own wallet to sign it (Kassa holds no key of the treasury). */
  awaiting_signature: {
    enteredBy: "the merchant's refund from the treasury (treasuryRefunds.ts planTreasuryRefund, for a sale or unmatched money)",
    leftBy: 'the reader (treasuryConfirmations.ts confirmTreasuryRefund, expireTreasuryRefunds)',
    exits: ['treasury_transfer_seen', 'signature_expired'],
    final: false,
  },
  /** A refund from the treasury nobody signed in time: its amount may be asked again. */
  expired: {
    enteredBy: 'the reader (treasuryConfirmations.ts expireTreasuryRefunds)',
    leftBy: 'the reader, a wallet paying it late (treasuryConfirmations.ts confirmTreasuryRefund)',
    exits: ['treasury_transfer_seen'],
    final: false,
  },
} as const satisfies Record<OutgoingState, OutgoingStateRule>;

/** A transfer whose wallet accepted none of this many signed messages (each expired unseen; messages_signed counts them) fails (transient). */
export const MAX_MESSAGES_SIGNED = 5;
/** A transient failure is planned again at most this many times (a sweep; a refund is the merchant's to ask again). */
export const MAX_TRANSIENT_RETRIES = 5;
/** The first retry waits this long; each next one twice as long. */
export const RETRY_BACKOFF_MS = 60_000;

export type OutgoingEvent =
  /** Signed, and the signed message recorded (before it is broadcast). */
  | { type: 'signed' }
  /** The chain was read LATE_COMMIT_MARGIN_MS past its valid_until without seeing it: it can never land. */
  | { type: 'expired_unseen' }
  /**
   * The wallet's transaction sent it — by any message ever signed for it, one that landed after the
   * transfer was failed unseen included (its shard block committed later than the margin).
   */
  | { type: 'confirmed' }
  /**
   * An earlier transfer for the same money (a sweep or top-up planned again after it failed, a
   * refund asked again alike) was confirmed late after all: this one would pay it twice.
   */
  | { type: 'superseded'; by: string }
  /** The wallet's transaction sent nothing (its fee was paid all the same). */
  | { type: 'failed_on_chain'; why: string }
  /** The deposit's jetton wallet refused the jetton transfer its message asked for. */
  | { type: 'refused_by_jetton_wallet'; why: string }
  /**
   * The destination's jetton wallet refused the jettons (e.g. a stablecoin wallet its issuer froze):
   * the internal_transfer bounced and the deposit's jetton wallet took the amount back.
   */
  | { type: 'bounced_at_destination'; why: string }
  /**
   * A jetton transfer confirmed when it left: its destination's jetton wallet took it (its
   * internal_transfer succeeded). It stays confirmed; only now is it told.
   */
  | { type: 'delivered' }
  /** The signer will not send it: the books and the chain disagree, or it is too little to move. */
  | { type: 'not_sendable'; reason: string; permanent: boolean }
  /**
   * A treasury refund (signed by the merchant's wallet, never by Kassa): the chain reader saw the
   * transfer carrying its reference leave the treasury. It confirms one awaiting the signature, or
   * one found expired (a wallet that set its own later valid_until: the money left all the same).
   */
  | { type: 'treasury_transfer_seen' }
  /** A treasury refund nobody signed: the chain was read LATE_COMMIT_MARGIN_MS past its validUntil without seeing it. */
  | { type: 'signature_expired' };

interface OutgoingSubject {
  state: OutgoingState;
  messagesSigned: number;
  /** Earlier transient failures of the same transfer (the planner counts them). */
  retries: number;
  /** A transaction of one of its messages is on the books (its wallet accepted it): false when it failed unseen or unsent. */
  landed?: boolean;
}

export type Failure = { reason: string; kind: 'permanent' | 'transient'; retryAt: Date | null };
export type OutgoingTransition = { ok: true; to: OutgoingState; failure?: Failure } | { ok: false; reason: 'not_in_that_state' };

/** A transient failure's next try: backoff doubling from RETRY_BACKOFF_MS; none after MAX_TRANSIENT_RETRIES (then it is permanent). */
export function retryAfter(retries: number, now: Date): Date | null {
  if (retries >= MAX_TRANSIENT_RETRIES) return null;
  return new Date(now.getTime() + RETRY_BACKOFF_MS * 2 ** retries);
}

function failure(reason: string, permanent: boolean, retries: number, now: Date): Failure {
  const retryAt = permanent ? null : retryAfter(retries, now);
  if (retryAt === null) return { reason: permanent ? reason : `${reason} (gave up after ${retries} retries)`, kind: 'permanent', retryAt: null };
  return { reason, kind: 'transient', retryAt };
}

const to = (state: OutgoingState, f?: Failure): OutgoingTransition => (f ? { ok: true, to: state, failure: f } : { ok: true, to: state });
const refuse: OutgoingTransition = { ok: false, reason: 'not_in_that_state' };

export function outgoingTransition(subject: OutgoingSubject, event: OutgoingEvent, now: Date): OutgoingTransition {
  const { state } = subject;
  switch (event.type) {
    case 'signed':
      return state === 'planned' ? to('sent') : refuse;
    case 'expired_unseen':
      if (state !== 'sent') return refuse;
      if (subject.messagesSigned >= MAX_MESSAGES_SIGNED)
        return to('failed', failure(`the wallet accepted none of ${MAX_MESSAGES_SIGNED} signed messages`, false, subject.retries, now));
      return to('planned');
    case 'confirmed':
      // A failed transfer none of whose messages was seen (failed unseen, or not sendable after a
      // re-plan) is confirmed when one lands after all: the books follow the chain.
      return state === 'sent' || state === 'planned' || (state === 'failed' && subject.landed === false) ? to('confirmed') : refuse;
    case 'superseded':
      return state === 'planned' || state === 'sent'
        ? to('failed', failure(`its money already left with transfer ${event.by}, whose message landed late`, true, subject.retries, now))
        : refuse;
    case 'failed_on_chain':
      // The wallet had its say (e.g. not enough money): the same message would fail again.
      return state === 'sent' || state === 'planned' ? to('failed', failure(`the wallet sent nothing: ${event.why}`, true, subject.retries, now)) : refuse;
    case 'refused_by_jetton_wallet':
      return state === 'confirmed' ? to('failed', failure(`the jetton wallet refused the transfer (${event.why})`, true, subject.retries, now)) : refuse;
    case 'bounced_at_destination':
      // The same destination would refuse again: permanent (a refund is the merchant's to ask again
      // elsewhere; a sweep waits for another treasury).
      return state === 'confirmed'
        ? to('failed', failure(`the destination's jetton wallet refused the jettons; they came back to the deposit (${event.why})`, true, subject.retries, now))
        : refuse;
    case 'delivered':
      return state === 'confirmed' ? to('confirmed') : refuse;
    case 'not_sendable':
      return state === 'planned' ? to('failed', failure(event.reason, event.permanent, subject.retries, now)) : refuse;
    case 'treasury_transfer_seen':
      return state === 'awaiting_signature' || state === 'expired' ? to('confirmed') : refuse;
    case 'signature_expired':
      return state === 'awaiting_signature' ? to('expired') : refuse;
  }
}
