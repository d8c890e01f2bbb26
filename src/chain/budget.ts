// The chain API request budget: one per process, shared by every chain read (the block reader's
// v3 requests and TonClient's get methods), so Kassa never sends more than TON_API_RPS requests a
// second. A 429 (or another retryable failure) pauses every request for a backoff that doubles
// while failures continue and resets on the next success.

export interface RequestBudget {
  /** Waits for a slot (or for the pause after a rate limit to end), then takes it. */
  take(signal?: AbortSignal): Promise<void>;
  /** The API said 429 (or failed retryably): pause everything, `retryAfterMs` when the API said so. */
  backOff(retryAfterMs?: number | null): number;
  /** A request succeeded: the next backoff starts small again. */
  succeeded(): void;
  readonly rps: number;
}

/**
 * How often each network makes a masterchain block (ms): mainnet about every 400 ms since 2026
 * (2.5 blocks/s), testnet about every 450 ms (~2.2 blocks/s); the sandbox seals one every 400 ms.
 */
export const BLOCK_INTERVAL_MS = { mainnet: 400, testnet: 450, sandbox: 400 } as const;

/**
 * The chain reader's requests per masterchain block while caught up: the next block asked for
 * directly (a 404 or an empty answer, "not indexed yet", is asked again) and a `masterchainInfo` every few
 * seconds — 1.12–1.14 measured by bench/chain (docs/PERFORMANCE.md), rounded up. A budget must allow
 * at least the network's block rate times this to keep up.
 */
export const READER_REQUESTS_PER_BLOCK = 1.2;

/** What following `network` costs, and what `rps` leaves for everything else (0 rps: no cap). */
export function budgetHeadroom(
  network: keyof typeof BLOCK_INTERVAL_MS,
  rps: number,
  requestsPerBlock = READER_REQUESTS_PER_BLOCK,
): { blocksPerSecond: number; needed: number; headroom: number | null; catchUpFactor: number | null } {
  const blocksPerSecond = 1000 / BLOCK_INTERVAL_MS[network];
  const needed = blocksPerSecond * requestsPerBlock;
  if (rps <= 0) return { blocksPerSecond, needed, headroom: null, catchUpFactor: null };
  return { blocksPerSecond, needed, headroom: rps - needed, catchUpFactor: rps / needed };
}

/**
 * Why a mainnet or testnet budget cannot follow the chain (one line naming TON_API_RPS and a key),
 * or null when it can. The sandbox, and a budget of 0 (no cap: a self-hosted indexer), always can.
 */
export function budgetShortfall(network: keyof typeof BLOCK_INTERVAL_MS, rps: number, hasKey: boolean): string | null {
  if (network === 'sandbox' || rps <= 0) return null;
  const { blocksPerSecond, needed } = budgetHeadroom(network, rps);
  if (rps >= needed) return null;
  const round = (n: number) => Math.round(n * 10) / 10;
  return (
    `TON_API_RPS=${rps} cannot keep up with ${network}: it makes about ${round(blocksPerSecond)} masterchain blocks/s and the chain reader needs about ` +
    `${READER_REQUESTS_PER_BLOCK} requests per block (${round(needed)} requests/s). ` +
    `${hasKey ? "Set TON_API_RPS to your plan's rate (toncenter: 10 free, 25 or 100 paid)" : "Set TON_API_KEY (toncenter's free key allows 10 requests/s: https://t.me/toncenter) and TON_API_RPS to its plan's rate"}, ` +
    'or TON_API_RPS=0 for an API without a limit (a self-hosted ton-indexer, docs/OPERATIONS.md)'
  );
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * A budget of `rps` requests per second (0: unlimited). Slots are spaced evenly (1/rps apart), so
 * bursts never exceed what toncenter's per-second window allows.
 */
export function createRequestBudget(rps: number, clock: () => number = () => performance.now()): RequestBudget {
  const spacing = rps > 0 ? 1000 / rps : 0;
  let nextSlot = 0;
  let pausedUntil = 0;
  let backoff = 0;
  return {
    rps,
    async take(signal) {
      for (;;) {
        const now = clock();
        const at = Math.max(now, nextSlot, pausedUntil);
        if (at <= now) {
          nextSlot = now + spacing;
          return;
        }
        // Reserve the slot before sleeping, so concurrent callers queue behind each other.
        if (at >= pausedUntil && spacing > 0 && nextSlot >= pausedUntil) {
          nextSlot = at + spacing;
          await sleep(at - now, signal);
          return;
        }
        await sleep(at - now, signal);
      }
    },
    backOff(retryAfterMs) {
      backoff = backoff === 0 ? FIRST_BACKOFF_MS : Math.min(MAX_BACKOFF_MS, backoff * 2);
      const wait = Math.max(backoff, retryAfterMs ?? 0);
      pausedUntil = Math.max(pausedUntil, clock() + wait);
      return wait;
    },
    succeeded() {
      backoff = 0;
    },
  };
}

/** A Retry-After header value (seconds, or an HTTP date seen at `now`, epoch ms) in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
