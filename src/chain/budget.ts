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

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

const sleep = (ms: number, signal?: AbortSignal) =>
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

/** A Retry-After header value (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
