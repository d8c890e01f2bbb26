--! Previous: sha1:499e06d70cd548b108bca6a77c1d9810df15b1f2
--! Hash: sha1:e1fecb4de29a4634b57270939a07ba8a3cf712e5
--! Message: wake workers when a job queue is freed

-- A named Graphile Worker queue's next job starts as soon as the job before it is done, not at the
-- worker's next poll (an endpoint's burst of events drained at one delivery a second). Graphile
-- frees a queue by updating graphile_worker._private_job_queues but tells no runner; this function
-- sends the NOTIFY a runner listens for (jobs:insert) when a queue goes from locked to free, at
-- commit. The trigger that calls it is created by src/db/migrate.ts after Graphile Worker's schema is
-- installed (that schema does not exist yet when these migrations run on a fresh database).
create or replace function public.wake_workers_when_queue_freed() returns trigger language plpgsql as $$
begin
  if old.locked_at is not null and new.locked_at is null then
    perform pg_notify('jobs:insert', '{"count":1}');
  end if;
  return null;
end $$;
comment on function public.wake_workers_when_queue_freed() is
  'Kassa (migration 000059; its trigger from src/db/migrate.ts): tells Graphile Worker''s runners (NOTIFY jobs:insert) that a named job queue is free again, so its next job starts at once rather than at the next poll.';
