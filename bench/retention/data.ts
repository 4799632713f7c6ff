// The data of bench/retention: audit events spread evenly over the last 730 days (half of them past
// the default audit.retention of 365 days), in the monthly partitions a service running that long
// would have made, and a few expired rows of every other kind so each one is purged too.
import type pg from 'pg';

const CHUNK = 250_000;

export async function generateAuditEvents(db: pg.ClientBase, total: number, log: (line: string) => void): Promise<void> {
  await db.query(`select ensure_audit_event_partitions(now() - interval '731 days', now() + interval '3 months')`);
  for (let from = 1; from <= total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK - 1);
    await db.query(
      `insert into audit_events (occurred_at, recorded_at, actor_kind, actor_id, actor_label, action, resource_type, resource_id,
                                 outcome, request_id, client_ip, user_agent, metadata)
       select at, at, 'account', 'acct-' || (g % 500), 'user' || (g % 500) || '@example.com',
              (array['settings.value.changed', 'auth.role.granted', 'jobs.definition.changed', 'auth.token.issued'])[1 + g % 4],
              'setting', 'audit.retention', 'success', 'req-' || g, '203.0.113.9', 'curl/8.5',
              jsonb_build_object('reason', 'routine change number ' || g, 'before', g % 97, 'after', g % 89)
       from generate_series($1::int, $2::int) g,
            lateral (select now() - (g * interval '730 days' / $3::int) as at) spread`,
      [from, to, total],
    );
    log(`  audit events ${to.toLocaleString('en')} / ${total.toLocaleString('en')}`);
  }
}

export async function generateOtherKinds(db: pg.ClientBase): Promise<void> {
  await db.query(`
    insert into settings_history (name, old_value, new_value, version, reason, actor_kind, actor_id, actor_label, changed_at)
    select 'bench.setting', '1', '2', g, 'bench', 'system', 'bench', 'bench', now() - interval '400 days' - g * interval '1 minute'
    from generate_series(1, 1000) g`);
  await db.query(`
    insert into job_definition_history (job, version, old_config, new_config, reason, changed_at)
    select 'bench_job', g, '{}', '{}', 'bench', now() - interval '400 days' - g * interval '1 minute'
    from generate_series(1, 1000) g`);
  await db.query(`
    insert into job_runs (job, trigger, queue, state, max_attempts, created_at, finished_at)
    select 'bench_job', 'manual', 'default', 'succeeded', 1, now() - interval '400 days' - g * interval '1 minute', now() - interval '400 days'
    from generate_series(1, 1000) g`);
  await db.query(`
    insert into release_instances (instance_id, version, runtime_version, host, pid, started_at, last_seen_at, stopped_at)
    select 'bench-' || g, '0.0.0', 'v20', 'bench-host', g, now() - interval '101 days', now() - interval '100 days', now() - interval '100 days'
    from generate_series(1, 100) g`);
}
