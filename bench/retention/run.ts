// bench/retention: 2,000,000 audit events over 24 months, 1,000,000 of them past audit.retention.
// Each round works on two fresh copies of the same data: (a) one unbatched DELETE of the expired
// rows, (b) the retention job through the running service (run-now), timed from the request to
// the run finished. GET /ops/system is called throughout at a steady BENCH_SYSTEM_RATE (1,000/s,
// about a sixth of what the two instances serve), open loop, so a slow answer cannot hold back
// the calls behind it; its p99 is taken idle, during (a) and during (b). BENCH_SYSTEM_RATE=0
// drives it with autocannon as fast as 10 connections go instead (the setup until 2026-11-22T07):
// there the p99 says how much CPU the machine has left, not what the job does to one call.
// Rounds are repeated (BENCH_ROUNDS, 3) and the medians compared.
// Goals: (b) at least 5x (a)'s rows/s; (b)'s longest statement under 250 ms; p99 during (b)
// within 1.5x idle. The database is durable, as `backplane serve` runs it (BENCH_DURABLE=0: fsync
// and synchronous commit off, as the tests run it).
import autocannon from 'autocannon';
import pg from 'pg';
import { sleep } from '../../src/platform/time.ts';
import { accountWithToken } from '../../test/support/tokens.ts';
import { buildService, startDatabase, startService, writeResults } from '../support/harness.ts';
import { steadyCalls } from '../support/steadyCalls.ts';
import { generateAuditEvents, generateOtherKinds } from './data.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? '2000000');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const IDLE_SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const CONNECTIONS = 10;
const SYSTEM_RATE = Number(process.env.BENCH_SYSTEM_RATE ?? '1000');
const DURABLE = process.env.BENCH_DURABLE !== '0';
const log = (line: string) => console.log(line);

const database = await startDatabase({ durable: DURABLE });
const connect = async (name: string) => {
  const client = new pg.Client({ connectionString: database.url.replace(/\/backplane$/, `/${name}`), application_name: 'bench' });
  await client.connect();
  return client;
};

log(`${DURABLE ? 'durable database' : 'fsync off'}; generating ${EVENTS.toLocaleString('en')} audit events`);
const setup = await connect('backplane');
await generateAuditEvents(setup, EVENTS, log);
await generateOtherKinds(setup);
// Months that old would long have been vacuumed by autovacuum.
await setup.query('vacuum analyze');
const { token } = await accountWithToken(setup, { roles: ['platform_admin'], ttlSeconds: 3600 });
await setup.end();
const admin = await connect('postgres');
buildService();
const headers = { Authorization: `Bearer ${token}` };

interface Window {
  p99Ms: number;
  requests: number;
  failed: number;
}

/** GET /ops/system under constant load; the p99 of any time window can be read afterwards. */
function loadSystem(url: string) {
  if (SYSTEM_RATE > 0) {
    const calls = steadyCalls(`${url}/ops/system`, SYSTEM_RATE, headers);
    return {
      window: (from: number, to: number): Window => {
        const { p99Ms, calls: requests, failed } = calls.window(from, to);
        return { p99Ms, requests, failed };
      },
      stop: () => calls.stop(),
    };
  }
  const samples: Array<{ at: number; ms: number }> = [];
  const cannon = autocannon({ url: `${url}/ops/system`, headers, connections: CONNECTIONS, duration: 300 }, () => undefined);
  cannon.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => samples.push({ at: performance.now(), ms }));
  return {
    window(from: number, to: number): Window {
      const window = samples
        .filter((s) => s.at > from && s.at <= to)
        .map((s) => s.ms)
        .sort((a, b) => a - b);
      return { p99Ms: window.length ? window[Math.ceil(window.length * 0.99) - 1]! : NaN, requests: window.length, failed: 0 };
    },
    stop: () => cannon.stop(),
  };
}

async function quiet(): Promise<void> {
  await admin.query('checkpoint');
  await sleep(2_000);
}

async function unbatchedDelete(name: string) {
  const copy = await connect(name);
  const from = performance.now();
  await copy.query('begin');
  await copy.query(`select set_config('backplane.audit_purge', 'on', true)`);
  const deleted = await copy.query(`delete from audit_events where occurred_at < now() - interval '8760 hours'`);
  await copy.query('commit');
  const to = performance.now();
  await copy.end();
  return { rows: deleted.rowCount ?? 0, seconds: (to - from) / 1000, from, to };
}

async function retentionJob(url: string, name: string) {
  const live = await connect(name);
  const from = performance.now();
  const response = await fetch(`${url}/ops/jobs/definitions/retention/run`, { method: 'POST', headers });
  if (response.status !== 202) {
    throw new Error(`run-now answered ${response.status}: ${await response.text()}`);
  }
  const runId = ((await response.json()) as { id: string }).id;
  const runSql = `select state, error, extract(epoch from finished_at - created_at)::float8 as seconds,
                         extract(epoch from finished_at - started_at)::float8 as run_seconds
                  from job_runs where id = $1`;
  let run = (await live.query(runSql, [runId])).rows[0];
  while (run.state !== 'succeeded' && run.state !== 'failed') {
    await sleep(20);
    run = (await live.query(runSql, [runId])).rows[0];
  }
  const to = performance.now();
  const kinds = (
    await live.query<{ kind: string; metadata: Record<string, number | string> }>(
      `select resource_id as kind, metadata from audit_events where action = 'retention.purged' order by id`,
    )
  ).rows.map((row): Record<string, number | string> => ({ ...row.metadata, kind: row.kind }));
  const audit = kinds.find((kind) => kind.kind === 'audit_events');
  // Past the run's own cutoff: rows that have aged past it since are the next run's.
  const left = Number((await live.query(`select count(*) from audit_events where occurred_at < $1`, [audit?.before ?? new Date()])).rows[0].count);
  await live.end();
  return {
    state: run.state as string,
    error: run.error as string | null,
    rows: Number(audit?.rows ?? 0),
    seconds: Number(run.seconds),
    runSeconds: Number(run.run_seconds),
    longestStatementMs: Math.max(0, ...kinds.map((kind) => Number(kind.longest_statement_ms))),
    expiredLeft: left,
    kinds,
    from,
    to,
  };
}

async function round(index: number) {
  const a = `bench_a_${index}`;
  const b = `bench_b_${index}`;
  await admin.query(`create database ${a} template backplane`);
  await admin.query(`create database ${b} template backplane`);
  const service = await startService(database.url.replace(/\/backplane$/, `/${b}`), 2, { LOG_LEVEL: 'warn' });
  const load = loadSystem(service.url);
  try {
    await sleep(2_000);
    await quiet();
    const idleFrom = performance.now();
    await sleep(IDLE_SECONDS * 1000);
    const idle = load.window(idleFrom, performance.now());
    await quiet();
    const { from: aFrom, to: aTo, ...unbatched } = await unbatchedDelete(a);
    await quiet();
    const { from: bFrom, to: bTo, ...job } = await retentionJob(service.url, b);
    return { idle, unbatched: { ...unbatched, ...load.window(aFrom, aTo) }, job: { ...job, ...load.window(bFrom, bTo) } };
  } finally {
    load.stop();
    await service.stop();
    await admin.query(`drop database ${a}`);
    await admin.query(`drop database ${b}`);
  }
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const rate = (rows: number, seconds: number) => Math.round(rows / seconds);

try {
  const rounds = [];
  for (let index = 1; index <= ROUNDS; index += 1) {
    log(`round ${index} of ${ROUNDS}`);
    rounds.push(await round(index));
  }
  const table = [['round', 'scenario', 'rows', 'seconds', 'rows/s', 'longest stmt ms', '/ops/system p99 ms', 'requests']];
  rounds.forEach((r, i) => {
    const n = String(i + 1);
    table.push([n, 'idle', '', '', '', '', r.idle.p99Ms.toFixed(1), String(r.idle.requests)]);
    table.push([
      n,
      '(a) one unbatched DELETE',
      String(r.unbatched.rows),
      r.unbatched.seconds.toFixed(2),
      String(rate(r.unbatched.rows, r.unbatched.seconds)),
      (r.unbatched.seconds * 1000).toFixed(0),
      r.unbatched.p99Ms.toFixed(1),
      String(r.unbatched.requests),
    ]);
    table.push([
      n,
      '(b) retention job, request to finish',
      String(r.job.rows),
      r.job.seconds.toFixed(2),
      String(rate(r.job.rows, r.job.seconds)),
      r.job.longestStatementMs.toFixed(1),
      r.job.p99Ms.toFixed(1),
      String(r.job.requests),
    ]);
  });
  const widths = table[0]!.map((_cell, i) => Math.max(...table.map((row) => row[i]!.length)));
  table.forEach((row) => log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')));

  const summary = {
    rounds: ROUNDS,
    median_a_seconds: median(rounds.map((r) => r.unbatched.seconds)),
    median_b_seconds: median(rounds.map((r) => r.job.seconds)),
    median_b_run_seconds: median(rounds.map((r) => r.job.runSeconds)),
    speedup_b_over_a: Number(median(rounds.map((r) => rate(r.job.rows, r.job.seconds) / rate(r.unbatched.rows, r.unbatched.seconds))).toFixed(2)),
    longest_statement_ms_b: Math.max(...rounds.map((r) => r.job.longestStatementMs)),
    p99_during_b_over_idle: Number(median(rounds.map((r) => r.job.p99Ms / r.idle.p99Ms)).toFixed(2)),
    system_calls_failed: rounds.reduce((sum, r) => sum + r.idle.failed + r.unbatched.failed + r.job.failed, 0),
    all_runs_succeeded: rounds.every((r) => r.job.state === 'succeeded' && r.job.expiredLeft === 0),
    goals: { speedup_b_over_a: '>= 5', longest_statement_ms_b: '< 250', p99_during_b_over_idle: '<= 1.5' },
  };
  log(JSON.stringify(summary));
  log(
    `written: ${writeResults(DURABLE ? 'retention' : 'retention-fsync-off', { when: new Date().toISOString(), database: DURABLE ? 'durable' : 'fsync off', events: EVENTS, connections: CONNECTIONS, system_rate: SYSTEM_RATE || 'as fast as the connections go', rounds, summary })}`,
  );
} finally {
  await admin.end();
  await database.stop();
}
