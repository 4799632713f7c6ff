import type { Queryable } from '../../../src/platform/db/pool.ts';

/**
 * Rows of every kind at controlled ages on the database clock, each marked by what the default
 * retentions (365 days, 365 days, 90 days) should do with it.
 */
export async function seedExpiring(db: Queryable): Promise<void> {
  await db.query(`
    insert into audit_events (occurred_at, actor_kind, action, outcome, resource_type, resource_id)
    select at, 'system', 'test.seeded', 'success', 'test', marker
    from (values
      (now() - interval '700 days', 'expired-month'), (now() - interval '700 days', 'expired-month'),
      (now() - interval '690 days', 'expired-month'),
      (now() - interval '366 days', 'expired-boundary'), (now() - interval '365 days 1 hour', 'expired-boundary'),
      (now() - interval '364 days', 'kept-boundary'), (now() - interval '364 days 23 hours', 'kept-boundary'),
      (now() - interval '40 days', 'kept-until-shortened'),
      (now() - interval '10 days', 'kept-recent'),
      (timestamptz '2000-01-01 00:00:00+00', 'expired-default'), (timestamptz '2001-06-01 00:00:00+00', 'expired-default'),
      (now() + interval '5 years', 'kept-future')
    ) as seeded(at, marker)`);
  await db.query(`
    insert into settings_history (name, old_value, new_value, version, reason, actor_kind, actor_id, actor_label, changed_at)
    select 'test.seeded', '1', '2', 1, marker, 'system', 'seed', 'seed', at
    from (values
      (now() - interval '400 days', 'expired'), (now() - interval '366 days', 'expired'),
      (now() - interval '300 days', 'kept'), (now() - interval '20 days', 'kept-recent')
    ) as seeded(at, marker)`);
  await db.query(`
    insert into job_definition_history (job, version, old_config, new_config, reason, changed_at)
    select 'test_seeded', 1, '{}', '{}', marker, at
    from (values (now() - interval '400 days', 'expired'), (now() - interval '100 days', 'kept')) as seeded(at, marker)`);
  // A job no instance runs, so its queued run stays queued: only finished runs are retention's.
  await db.query(`
    insert into job_runs (job, trigger, queue, state, max_attempts, requested_by, created_at, finished_at)
    select 'gone_job', 'manual', 'default', state, 1, marker, at, case when state = 'queued' then null else at end
    from (values
      ('succeeded', now() - interval '400 days', 'expired'), ('succeeded', now() - interval '370 days', 'expired'),
      ('failed', now() - interval '380 days', 'expired'),
      ('succeeded', now() - interval '10 days', 'kept'),
      ('queued', now() - interval '400 days', 'old-but-unfinished')
    ) as seeded(state, at, marker)`);
  // Seeding again re-ages the same records.
  await db.query(`
    insert into release_instances (instance_id, version, runtime_version, host, pid, started_at, last_seen_at, stopped_at)
    select 'seeded-' || marker, '0.0.0', 'v20', 'test-host', 1, at - interval '1 day', at, stopped
    from (values
      ('old-stopped', now() - interval '100 days', now() - interval '100 days'),
      ('old-silent', now() - interval '95 days', null::timestamptz),
      ('recent-stopped', now() - interval '10 days', now() - interval '10 days')
    ) as seeded(marker, at, stopped)
    on conflict (instance_id) do update set last_seen_at = excluded.last_seen_at, stopped_at = excluded.stopped_at`);
}
