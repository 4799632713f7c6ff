-- A decision counts from the later of its statement's start and the bucket's last write.
-- statement_timestamp() is when a statement began. One that waited for another statement's row
-- lock (a batch of another pod, or of another instance with APP_RATELIMIT_BATCHING=instance) may
-- have begun before the statement it waited for, and counted from that earlier instant the bucket
-- looked fuller by the wait: at the edge of a limit it refused a hit the budget still held. Time
-- cannot be earlier than the row's last write, so counting from it sees the bucket exactly as the
-- lock holder left it, and never ahead of real time. Nullable without a default: adding it rewrites
-- nothing, and a row written before this migration counts from the statement as before.
-- The body is otherwise the one of 20261124000100_create_ratelimit_take_function (its comments
-- and src/modules/ratelimit/store.ts say how it decides).
alter table ratelimit_buckets add column written_at timestamptz;

create or replace function ratelimit_take(bytea[], int[], int, bigint, bigint)
returns table ("position" int, admitted int, used_us bigint)
language plpgsql
set plan_cache_mode = force_generic_plan
as $function$
#variable_conflict use_column
begin
  perform set_config('synchronous_commit', 'off', true);
  return query
with input as (
  select key, least(hits, $3::int) as wanted, position
  from unnest($1::bytea[], $2::int[]) with ordinality as hit (key, hits, position)
), taken as (
  insert into ratelimit_buckets as bucket (key, tat, written_at)
  select key, statement_timestamp() + interval '1 microsecond' * (wanted * $4::bigint), statement_timestamp()
  from input
  order by position
  on conflict (key) do update
    set previous_tat = bucket.tat,
      written_at = greatest(statement_timestamp(), bucket.written_at),
      tat = greatest(statement_timestamp(), bucket.written_at) + interval '1 microsecond' * (
      greatest(extract(epoch from bucket.tat - greatest(statement_timestamp(), bucket.written_at)) * 1000000, 0)
      + $4::bigint * least(
        round(extract(epoch from excluded.tat - excluded.written_at) * 1000000 / $4::bigint),
        floor(($5::bigint - greatest(extract(epoch from bucket.tat - greatest(statement_timestamp(), bucket.written_at)) * 1000000, 0)) / $4::bigint)))
    where $5::bigint - greatest(extract(epoch from bucket.tat - greatest(statement_timestamp(), bucket.written_at)) * 1000000, 0) >= $4::bigint
  returning bucket.key, bucket.previous_tat as before, bucket.tat as after, bucket.written_at as at
)
select input.position::int as position,
  coalesce(round((extract(epoch from taken.after - taken.at)
    - greatest(extract(epoch from coalesce(taken.before, taken.at) - taken.at), 0)) * 1000000 / $4::bigint), 0)::int as admitted,
  coalesce(extract(epoch from taken.after - taken.at) * 1000000,
    greatest(extract(epoch from (select stored.tat from ratelimit_buckets stored where stored.key = input.key) - statement_timestamp()) * 1000000, 0),
    $5::bigint)::bigint as used_us
from input
left join taken on taken.key = input.key
order by input.position;
end
$function$;
