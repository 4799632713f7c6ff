// bench/audit: how many audit events a day `GET /ops/audit/stats` can count within its 5 s bound.
// BENCH_EVENTS (3,000,000) events spread evenly over the last BENCH_DAYS (35) days, in their monthly
// partitions, on a durable throw-away PostgreSQL; then the stats the route runs (by action, by day)
// over 1, 7, 30 and 90 days, each BENCH_ROUNDS (3) times, the median reported with the rows it
// counted. Rows counted per second of the slowest window gives the events per day whose 90-day
// stats still fit the bound; retention's side is bench/retention.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createAuditQueries } from '../../src/modules/audit/index.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { benchPostgres } from '../ratelimit/postgres.ts';
import { root, startDatabase } from '../ratelimit/processes.ts';

const events = Number(process.env.BENCH_EVENTS ?? '3000000');
const days = Number(process.env.BENCH_DAYS ?? '35');
const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
const windows = [1, 7, 30, 90];
const BOUND_MS = 5_000;
const CHUNK = 250_000;

const postgres = benchPostgres();
const database = await startDatabase(true, postgres.prefix);
const pool = createPool({ connectionString: database.url, max: 2, applicationName: 'bench-audit' });
const table: Array<{ days: number; groupBy: string; rows: number; medianMs: number; rowsPerSecond: number }> = [];
try {
  await pool.query(`select ensure_audit_event_partitions(now() - make_interval(days => $1::int + 1), now() + interval '3 months')`, [days]);
  for (let from = 1; from <= events; from += CHUNK) {
    const to = Math.min(events, from + CHUNK - 1);
    await pool.query(
      `insert into audit_events (occurred_at, recorded_at, actor_kind, actor_id, actor_label, action, resource_type, resource_id,
                                 outcome, request_id, client_ip, user_agent, metadata)
       select at, at, 'account', 'acct-' || (g % 500), 'user' || (g % 500) || '@example.com',
              (array['settings.value.changed', 'auth.role.granted', 'jobs.definition.changed', 'auth.sign_in'])[1 + g % 4],
              'setting', 'audit.retention', (array['success', 'failure'])[1 + g % 2], 'req-' || g, '203.0.113.9', 'curl/8.5',
              jsonb_build_object('reason', 'routine change number ' || g)
       from generate_series($1::int, $2::int) g,
            lateral (select now() - (g * make_interval(days => $4::int) / $3::int) as at) spread`,
      [from, to, events, days],
    );
    console.log(`audit events ${to.toLocaleString('en')} / ${events.toLocaleString('en')}`);
  }
  await pool.query('vacuum analyze audit_events');
  const audit = createAuditQueries(pool, { timeoutMs: 60_000 });
  for (const window of windows) {
    const to = new Date();
    const from = new Date(to.getTime() - window * 86_400_000);
    for (const groupBy of ['action', 'day'] as const) {
      const times: number[] = [];
      let rows = 0;
      for (let round = 0; round < rounds; round += 1) {
        const started = performance.now();
        rows = (await audit.stats({ from, to }, groupBy)).total;
        times.push(performance.now() - started);
      }
      const medianMs = Math.round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!);
      table.push({ days: window, groupBy, rows, medianMs, rowsPerSecond: Math.round((rows * 1000) / Math.max(1, medianMs)) });
      console.log(`stats by ${groupBy} over ${window} days: ${rows.toLocaleString('en')} events in ${medianMs} ms`);
    }
  }
} finally {
  await pool.end();
  await database.stop();
}
// The slowest counting rate of the longest window decides how many events a day fit the bound.
const slowest = Math.min(...table.filter((row) => row.days === 90).map((row) => row.rowsPerSecond));
const summary = { events_per_day_within_bound_90_days: Math.floor((slowest * BOUND_MS) / 1000 / 90), bound_ms: BOUND_MS };
console.table(table);
console.log(summary);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `audit-stats-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      when: new Date().toISOString(),
      machine: { cpus: availableParallelism(), node: process.version },
      postgres: postgres.major,
      events,
      days,
      rounds,
      table,
      summary,
    },
    null,
    2,
  ) + '\n',
);
console.log(`written: ${file}`);
