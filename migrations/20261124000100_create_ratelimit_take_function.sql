-- The limiter's decision as a function, for two reasons (ADR 0020, amendment 2026-11-24):
-- - PL/pgSQL keeps the statement's plan per server connection, so a decision sent unnamed through
--   PgBouncer in transaction mode is not planned again on every call (it cost ~385 us of database
--   CPU more than the named statement of session pooling).
-- - The decision commits without waiting for its WAL flush (synchronous_commit off for that
--   transaction only): the flush, once per statement, was most of what a small batch cost. A
--   database crash may forget the last wal_writer_delay x 3 (0.6 s by default) of decisions, whose
--   clients then get those hits again; nothing else is lost or reordered.
-- The caller sends each decision in a transaction of its own (autocommit); set_config(..., true)
-- would otherwise last until the caller's transaction ends. The body is the statement the limiter
-- sent until now, with its parameters $1-$5: keys (sorted, distinct), hits, burst, the emission
-- interval in us and the tolerance in us. See src/modules/ratelimit/store.ts for how it decides.
create function ratelimit_take(bytea[], int[], int, bigint, bigint)
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
  insert into ratelimit_buckets as bucket (key, tat)
  select key, statement_timestamp() + interval '1 microsecond' * (wanted * $4::bigint)
  from input
  order by position
  on conflict (key) do update
    set previous_tat = bucket.tat,
      tat = statement_timestamp() + interval '1 microsecond' * (
      greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0)
      + $4::bigint * least(
        round(extract(epoch from excluded.tat - statement_timestamp()) * 1000000 / $4::bigint),
        floor(($5::bigint - greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0)) / $4::bigint)))
    where $5::bigint - greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0) >= $4::bigint
  returning bucket.key, bucket.previous_tat as before, bucket.tat as after
)
select input.position::int as position,
  coalesce(round((extract(epoch from taken.after - statement_timestamp())
    - greatest(extract(epoch from coalesce(taken.before, statement_timestamp()) - statement_timestamp()), 0)) * 1000000 / $4::bigint), 0)::int as admitted,
  coalesce(extract(epoch from taken.after - statement_timestamp()) * 1000000,
    greatest(extract(epoch from (select stored.tat from ratelimit_buckets stored where stored.key = input.key) - statement_timestamp()) * 1000000, 0),
    $5::bigint)::bigint as used_us
from input
left join taken on taken.key = input.key
order by input.position;
end
$function$;
