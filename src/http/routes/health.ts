import type Router from '@koa/router';
import { BLOCK_INTERVAL_MS } from '../../chain/budget.ts';
import { readerPosition, type ReaderPosition } from '../../chain/clock.ts';
import { sql } from '../../db/pool.ts';
import { serviceUnavailable } from '../../errors.ts';
import type { AppDeps, KassaState } from '../context.ts';

/** How long /healthz and /readyz wait for the database: a load balancer's check must get an answer (503) it can act on. */
const HEALTH_TIMEOUT_MS = 1_500;

/** `work`, or a rejection once HEALTH_TIMEOUT_MS has passed (a frozen server, a silent partition; the pool's own bounds are longer). */
async function withinHealthTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the database did not answer within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The body of GET /readyz, whether ready or not. */
interface Readiness {
  ready: boolean;
  /** Why not ready (empty when ready). */
  reasons: string[];
  database: 'ok' | 'unreachable';
  chain: {
    network: string;
    lastBlock: number | null;
    latestBlock: number | null;
    /** Estimated blocks behind the tip: those the reader recorded, plus those the chain made since it last wrote. */
    behindBlocks: number | null;
    secondsSinceUpdate: number | null;
    maxBehindBlocks: number;
  } | null;
}

/**
 * Whether the chain reader keeps up: at most `maxBehind` blocks behind the tip. The tip is what the
 * reader last saw; a reader that stopped writing its cursor falls behind by the blocks the chain
 * made since (the network's block interval), so a dead reader is noticed too.
 */
function readerVerdict(
  position: ReaderPosition | null,
  network: keyof typeof BLOCK_INTERVAL_MS,
  maxBehind: number,
): { ok: boolean; reason: string | null; behind: number | null } {
  if (position === null) return { ok: false, reason: 'the chain reader has not read a block yet', behind: null };
  const since = Math.floor((position.secondsSinceUpdate * 1000) / BLOCK_INTERVAL_MS[network]);
  const behind = position.recordedBehind + since;
  if (behind <= maxBehind) return { ok: true, reason: null, behind };
  return {
    ok: false,
    reason: `the chain reader is about ${behind} blocks behind the chain (more than READY_MAX_BLOCKS_BEHIND=${maxBehind}); it last wrote its cursor ${Math.round(position.secondsSinceUpdate)} s ago`,
    behind,
  };
}

/**
 * GET /healthz (liveness): 200 {"ok": true} once the database answers, 503 otherwise. GET /readyz
 * (readiness, for load balancers): 200 when the database answers and the chain reader is at most
 * READY_MAX_BLOCKS_BEHIND blocks behind, 503 otherwise; the body says why either way. Both answer
 * within HEALTH_TIMEOUT_MS whatever the database does. No auth.
 */
export function healthRoutes(router: Router<KassaState>, deps: AppDeps): void {
  router.get('/healthz', async (ctx) => {
    try {
      await withinHealthTimeout(deps.pool.oneFirst(sql.unsafe`select 1`));
    } catch (error) {
      ctx.state.log.warn({ err: error }, 'health check: database unreachable');
      throw serviceUnavailable();
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ok: true };
  });

  router.get('/readyz', async (ctx) => {
    const network = deps.config.tonNetwork;
    const maxBehindBlocks = deps.config.readyMaxBlocksBehind;
    let body: Readiness;
    try {
      const position = await withinHealthTimeout(readerPosition(deps.pool, network));
      const verdict = readerVerdict(position, network, maxBehindBlocks);
      body = {
        ready: verdict.ok,
        reasons: verdict.reason === null ? [] : [verdict.reason],
        database: 'ok',
        chain: {
          network,
          lastBlock: position?.lastBlock ?? null,
          latestBlock: position?.latestBlock ?? null,
          behindBlocks: verdict.behind,
          secondsSinceUpdate: position === null ? null : Math.round(position.secondsSinceUpdate * 10) / 10,
          maxBehindBlocks,
        },
      };
    } catch (error) {
      ctx.state.log.warn({ err: error }, 'readiness check: database unreachable');
      body = { ready: false, reasons: ['the database does not answer'], database: 'unreachable', chain: null };
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.status = body.ready ? 200 : 503;
    ctx.body = body;
  });
}
