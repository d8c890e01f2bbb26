// What the dashboard answers a page that records handing a treasury refund's TON Connect request to
// a wallet (issue 44 §1: the first recording wins, another is refused with until when the held one
// can land) — a sale's refund (dashboardPayments.ts) and unmatched money's (dashboardUnmatched.ts) alike;
// static/treasury.js reads it.
import type { RequestRecorded } from '../../treasury/treasuryRefunds.ts';

/** The JSON answer (status and body) to a recording of refund `refundId`'s request; null when there is no such refund (404). */
function requestSentAnswer(recorded: RequestRecorded, refundId: string): { status: number; body: Record<string, unknown> } | null {
  switch (recorded.outcome) {
    case 'recorded':
      return { status: 200, body: { refund: refundId, requestSent: true, heldUntil: recorded.heldUntil.toISOString() } };
    case 'held':
      return {
        status: 409,
        body: {
          refund: refundId,
          problem: 'request_in_wallet',
          message: 'The request for this refund is already in a wallet, which can still pay it: approve or decline it there.',
          requestSentAt: recorded.sentAt.toISOString(),
          heldUntil: recorded.heldUntil.toISOString(),
        },
      };
    case 'closed':
      return {
        status: 409,
        body: {
          refund: refundId,
          problem: 'not_awaiting_signature',
          message: `This refund can no longer be signed (${recorded.state}).`,
          state: recorded.state,
        },
      };
    case 'not_found':
      return null;
  }
}

/** Answers the page with `requestSentAnswer` (never cached); false when there is no such refund (the caller's not-found page). */
export function answerRequestSent(
  ctx: { set(field: string, value: string): void; status: number; body: unknown },
  recorded: RequestRecorded,
  refundId: string,
): boolean {
  ctx.set('Cache-Control', 'no-store');
  const answer = requestSentAnswer(recorded, refundId);
  if (answer === null) return false;
  ctx.status = answer.status;
  ctx.body = answer.body;
  return true;
}
