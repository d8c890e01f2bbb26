--! Previous: sha1:fa285efd82b6732d92ff044743e857bfe1439382
--! Hash: sha1:4cc5e6fefc01d44da7f04d4a31251c80b3e98037
--! Message: worker heartbeats

-- Worker liveness: each worker process records the ids of its Graphile workers every few seconds,
-- so that jobs locked by a worker that died (kill -9, lost machine) are unlocked within a minute or
-- two instead of after Graphile Worker's 4-hour lock timeout.
create table worker_heartbeats (
  worker_id text primary key,
  process text not null,
  started_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
comment on table worker_heartbeats is 'Graphile worker ids of the running Kassa worker processes and when each was last seen alive. Jobs locked by a worker not seen for 2 minutes are unlocked by worker__unlock_dead.';
create index worker_heartbeats_by_last_seen on worker_heartbeats (last_seen_at);
comment on index worker_heartbeats_by_last_seen is 'Finding stale workers.';
