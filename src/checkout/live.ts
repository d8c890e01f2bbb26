// Live status for the checkout page: one shared poller per process reads every watched payment's
// public view in one query about once a second, and hands each view to that payment's listeners.
// Database cost is one query per tick whatever the number of open pages; each listener keeps its
// own last-sent copy and sends only changes. Nothing runs while nobody watches. The dashboard's live
// list and its streams' grants use the same poller; each poll is counted by feed
// (kassa_live_polls_total), which a test waits on to know its listener has been asked.
import type { Logger } from '../log.ts';
import { livePolls } from '../metrics.ts';

/** Live-status streams: heartbeat, and a maximum life after which the browser reconnects by itself. */
export const EVENTS_HEARTBEAT_MS = 15_000;
export const EVENTS_MAX_LIFETIME_MS = 10 * 60_000;
/** Open event streams one client address may hold at once (beyond: 429, and the page polls instead). */
export const EVENTS_MAX_PER_CLIENT = 50;
/** Retry-After of a stream refused because the process holds CHECKOUT_STREAMS_MAX of them. */
export const EVENTS_FULL_RETRY_AFTER_SECONDS = 30;

type ViewListener<View> = (view: View) => void;

interface PaymentFeed<View> {
  /** Starts delivering `paymentId`'s view to `listener` from the next tick; returns the unsubscribe. */
  subscribe(paymentId: string, listener: ViewListener<View>): () => void;
  /** Open subscriptions (for tests and metrics). */
  size(): number;
}

/** What a feed watches, as its polls are counted. */
type LiveFeedName = 'checkout' | 'dashboard_list' | 'dashboard_grants';

export function createPaymentFeed<View>(options: {
  name: LiveFeedName;
  load: (paymentIds: readonly string[]) => Promise<Map<string, View>>;
  intervalMs?: number;
  log: Logger;
}): PaymentFeed<View> {
  const intervalMs = options.intervalMs ?? 1000;
  const listeners = new Map<string, Set<ViewListener<View>>>();
  let timer: NodeJS.Timeout | null = null;
  let count = 0;

  const schedule = () => {
    if (timer || listeners.size === 0) return;
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };

  async function tick(): Promise<void> {
    try {
      const ids = [...listeners.keys()];
      if (ids.length === 0) return;
      const views = await options.load(ids);
      for (const [id, view] of views) {
        for (const listener of listeners.get(id) ?? []) {
          try {
            listener(view);
          } catch (error) {
            options.log.warn({ err: error, paymentId: id }, 'checkout live listener failed');
          }
        }
      }
    } catch (error) {
      options.log.warn({ err: error }, 'checkout live status poll failed; retrying');
    } finally {
      // Counted after every listener was handed its view: a test that waits for a poll past the
      // one under way knows its listener has judged.
      livePolls.inc({ feed: options.name });
      timer = null;
      schedule();
    }
  }

  return {
    subscribe(paymentId, listener) {
      let set = listeners.get(paymentId);
      if (!set) {
        set = new Set();
        listeners.set(paymentId, set);
      }
      set.add(listener);
      count += 1;
      schedule();
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        count -= 1;
        set.delete(listener);
        if (set.size === 0 && listeners.get(paymentId) === set) listeners.delete(paymentId);
        if (listeners.size === 0 && timer) {
          clearTimeout(timer);
          timer = null;
        }
      };
    },
    size: () => count,
  };
}
