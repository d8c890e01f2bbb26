// How many PostgreSQL connections each part of a `kassa start` process may open (src/server.ts opens
// its pools with these), and what a deployment's PostgreSQL must leave room for: docs/OPERATIONS.md,
// "Database connections"; `kassa doctor` checks the room left.

/** The API's and the worker's shared pool (slonik). */
export const MAIN_POOL_CONNECTIONS = 20;
/** An API process's pool for the shared rate-limit counters. */
export const RATE_LIMIT_CONNECTIONS = 4;
/**
 * An API process's pool on the replica (DATABASE_REPORTING_URL) for the dashboard's reports: on the
 * replica's server, not counted in the primary's room (connectionsAtMost).
 */
export const REPORTING_CONNECTIONS = 4;
/** A worker process's pool for Graphile Worker: its two runners' 4 + 20 job slots, their listening and bookkeeping. */
export const WORKER_CONNECTIONS = 30;

/** The most connections a process with these parts may open. */
export function connectionsAtMost(parts: { api: boolean; worker: boolean }): number {
  return MAIN_POOL_CONNECTIONS + (parts.api ? RATE_LIMIT_CONNECTIONS : 0) + (parts.worker ? WORKER_CONNECTIONS : 0);
}

interface ConnectionRoom {
  /** PostgreSQL's max_connections. */
  max: number;
  /** superuser_reserved_connections (and reserved_connections where the server has it): not for Kassa. */
  reserved: number;
  /** Client connections open now, to every database of the server. */
  inUse: number;
}

/**
 * The doctor's judgement of the room left (pure): a warning when a new API process could be refused
 * at its most (RATE_LIMIT_CONNECTIONS + MAIN_POOL_CONNECTIONS), since the processes running may still
 * grow to theirs.
 */
export function judgeConnectionRoom(room: ConnectionRoom): { status: 'ok' | 'warn'; detail: string } {
  const free = room.max - room.reserved - room.inUse;
  const api = connectionsAtMost({ api: true, worker: false });
  const both = connectionsAtMost({ api: true, worker: true });
  const worker = connectionsAtMost({ api: false, worker: true });
  const numbers = `${room.inUse} of ${room.max} connections in use (${room.reserved} reserved for superusers): ${Math.max(free, 0)} free; a kassa start process may open up to ${both} (--api ${api}, --worker ${worker})`;
  if (free < api) {
    return {
      status: 'warn',
      detail: `${numbers}. Another API process could be refused ("sorry, too many clients already") and the processes running could be refused as their pools grow: raise max_connections (a restart of PostgreSQL) or run fewer processes (docs/OPERATIONS.md, Database connections)`,
    };
  }
  return { status: 'ok', detail: numbers };
}
