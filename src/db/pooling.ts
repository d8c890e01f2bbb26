// Whether a database URL goes through a pooler in transaction mode (PgBouncer's pool_mode=transaction,
// the "pooled" URLs of Neon, Supabase, RDS Proxy…): there, each statement outside a transaction may
// run on another PostgreSQL backend, so session state — a session-level advisory lock, LISTEN, a SET
// — is lost or left behind for another client. `kassa migrate` and `kassa start` refuse to migrate
// through one; `kassa doctor` ("database pooling") fails when migrations or the worker would use one.
import pg from 'pg';

interface PoolerProbe {
  /** true: statements of one client were answered by different backends, or by another client's. */
  pooled: boolean;
  /** What was seen, for a person: the backends' process ids. */
  detail: string;
}

/** How long the probe's second statement may wait for a backend held by the probe's own transaction. */
const BLOCKED_MS = 1_000;

/**
 * Probes `url` with two clients, B and A: B asks its backend's process id (pg_backend_pid()); A opens
 * a transaction and asks its own (a pooler in transaction mode hands A the backend B just gave back,
 * its most recently used); B asks again while A's transaction holds that backend. Direct (or
 * session-mode) connections give B one backend throughout and A another; a transaction pooler shows
 * A on B's backend, B on a second backend, or B waiting (a pool of one held by A).
 */
export async function probeTransactionPooler(url: string): Promise<PoolerProbe> {
  const b = new pg.Client({ connectionString: url });
  const a = new pg.Client({ connectionString: url });
  b.on('error', () => {});
  a.on('error', () => {});
  const pid = async (client: pg.Client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  try {
    await b.connect();
    const first = await pid(b);
    await a.connect();
    await a.query('begin');
    const other = await pid(a);
    let timer: NodeJS.Timeout | undefined;
    const second = await Promise.race([
      pid(b),
      new Promise<'waiting'>((resolve) => {
        timer = setTimeout(() => resolve('waiting'), BLOCKED_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    await a.query('rollback');
    if (second === 'waiting') {
      return { pooled: true, detail: `a second client's transaction held the only backend (pid ${first}) and the first client's next statement waited for it` };
    }
    if (other === first || second !== first) {
      return { pooled: true, detail: `one client's two statements were answered by backends ${first} and ${second}, another client's transaction by ${other}` };
    }
    return { pooled: false, detail: `one client's statements were answered by one backend (pid ${first})` };
  } finally {
    await a.end().catch(() => {});
    await b.end().catch(() => {});
  }
}

/** Refused migration through a transaction pooler (`kassa migrate`, `kassa start`): the message is the one line to print. */
class PoolerRefusedError extends Error {
  override name = 'PoolerRefusedError';
}

/**
 * Throws PoolerRefusedError when `url` (the session URL) goes through a transaction pooler: the
 * migration's session-level lock would be held by a pooled backend after Kassa left, and the
 * worker's LISTEN would hear nothing.
 */
export async function refuseTransactionPooler(url: string, what: string): Promise<void> {
  const probe = await probeTransactionPooler(url);
  if (!probe.pooled) return;
  throw new PoolerRefusedError(
    `${what} refused: DATABASE_SESSION_URL (or DATABASE_URL when it is unset) goes through a pooler in transaction mode (${probe.detail}). Set DATABASE_SESSION_URL to a direct or session-mode connection to PostgreSQL (your provider's "direct" or "session" URL) and keep the pooled one in DATABASE_URL (docs/OPERATIONS.md, "Behind a connection pooler")`,
  );
}
