import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { type TestCluster, runCli, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { RETENTION_JOB } from '../../src/modules/retention/kinds.ts';
import { metricNames, readYaml, root } from './manifests.ts';

/**
 * Names the alerts and the dashboard use that other branches add, absent here until the lead
 * merges them: reconcile this list at merge (a name present in the scrape is reported, to drop it).
 */
let db: TestDatabase;
let cluster: TestCluster;

test.before(async () => {
  db = await createTestDatabase();
  // One success and a later failure of a registered job, as the database would hold them.
  await db.pool.query(
    `insert into job_runs (job, trigger, queue, state, attempts, max_attempts, started_at, finished_at)
     values ('ratelimit_cleanup', 'manual', 'default', 'succeeded', 1, 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:10Z'),
            ('ratelimit_cleanup', 'manual', 'default', 'failed', 1, 1, '2026-01-02T00:00:00Z', '2026-01-02T00:00:20Z')`,
  );
  cluster = await startCluster(db.url, 2);
});

test.after.always(async () => {
  await cluster?.stop();
  await db?.drop();
});

/** Every name the scrape exposes, a histogram's or summary's series names included. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') {
      ['_bucket', '_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    }
    if (type === 'summary') {
      ['_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    }
  }
  return names;
}

function queriedNames(): Map<string, string> {
  const queried = new Map<string, string>();
  for (const group of readYaml<{ groups: { rules: { alert: string; expr: string }[] }[] }>('deploy/prometheus/rules.yaml').groups) {
    for (const rule of group.rules) {
      metricNames(rule.expr).forEach((name) => queried.set(name, `alert ${rule.alert}`));
    }
  }
  const dashboard = JSON.parse(readFileSync(join(root, 'deploy', 'grafana', 'backplane.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
    templating: { list: { query?: string | { query: string } }[] };
  };
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      metricNames(target.expr).forEach((name) => queried.set(name, `panel ${panel.title}`));
    }
  }
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    metricNames(query).forEach((name) => queried.set(name, 'dashboard variable'));
  }
  return queried;
}

/** Every sample of an exposition: its name and labels. */
function samples(text: string): { name: string; labels: Map<string, string>; value: string }[] {
  return [...text.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/gm)].map(([, name, labels, value]) => ({
    name: name!,
    labels: new Map([...(labels ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, key, labelValue]) => [key!, labelValue!])),
    value: value!,
  }));
}

// First: it reads the counters before any request, restart or job attempt.
test.serial('before any event, every counter with known label sets has its 0 samples', async (t) => {
  const text = await waitFor(
    async () => {
      const body = await (await fetch(cluster.metricsUrl)).text();
      return body.includes('worker="1"') && body.includes('worker="2"') ? body : undefined;
    },
    10_000,
    'metrics from both workers',
  );
  const all = samples(text);
  const zero = (name: string, labels: Record<string, string>) =>
    all.some((sample) => sample.name === name && sample.value === '0' && Object.entries(labels).every(([key, value]) => sample.labels.get(key) === value));
  for (const reason of ['exited', 'unresponsive']) {
    t.true(zero('backplane_instance_restarts_total', { role: 'primary', reason }), reason);
  }
  for (const worker of ['1', '2']) {
    t.true(zero('backplane_job_attempts_total', { worker, job_name: RETENTION_JOB, outcome: 'failed' }), `job attempts of worker ${worker}`);
    t.true(zero('backplane_ratelimit_fallbacks_total', { worker, limiter: 'auth_login', reason: 'timeout' }), `fallbacks of worker ${worker}`);
    t.true(
      zero('backplane_ratelimit_decisions_total', { worker, limiter: 'auth_login', allowed: 'false', source: 'fallback' }),
      `decisions of worker ${worker}`,
    );
  }
});

test.serial('no series carries `job` or `instance`, the labels Prometheus sets on every target', async (t) => {
  const text = await (await fetch(cluster.metricsUrl)).text();
  const clashing = samples(text).filter((sample) => sample.labels.has('job') || sample.labels.has('instance'));
  t.deepEqual(
    clashing.map((sample) => sample.name),
    [],
  );
  t.true(samples(text).length > 100);
});

test.serial('the primary exports its own process and Node.js series, labelled role="primary"', async (t) => {
  const text = await (await fetch(cluster.metricsUrl)).text();
  const all = samples(text);
  // One family each: the primary's samples join the instances' under one HELP and TYPE.
  const types = [...text.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name);
  t.deepEqual(
    types.filter((name, index) => types.indexOf(name) !== index),
    [],
  );
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
    const roles = all.filter((sample) => sample.name === name).map((sample) => `${sample.labels.get('role')}/${sample.labels.get('worker') ?? ''}`);
    t.deepEqual(roles.sort(), ['instance/1', 'instance/2', 'primary/'], name);
  }
});

test.serial('every metric an alert or a dashboard panel reads is in a real scrape of the cluster', async (t) => {
  // A little traffic of each kind: probes, an unmatched route, a refused ops call, a sign-in the limiter decides.
  for (let i = 0; i < 5; i += 1) {
    await (await fetch(`${cluster.url}/readyz`, { headers: { Connection: 'close' } })).text();
    await (await fetch(`${cluster.url}/livez`, { headers: { Connection: 'close' } })).text();
    await (await fetch(`${cluster.url}/ops/system`, { headers: { Connection: 'close' } })).text();
    await (await fetch(`${cluster.url}/nowhere`, { headers: { Connection: 'close' } })).text();
    await (
      await fetch(`${cluster.url}/auth/sign-in`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Connection: 'close' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }),
      })
    ).text();
  }
  const text = await waitFor(
    async () => {
      const body = await (await fetch(cluster.metricsUrl)).text();
      return body.includes('worker="1"') && body.includes('worker="2"') ? body : undefined;
    },
    10_000,
    'metrics from both workers',
  );
  const exposed = exposedNames(text);
  const queried = queriedNames();
  t.true(queried.size > 20);
  const missing = [...queried].filter(([name]) => !exposed.has(name)).map(([name, where]) => `${name} (${where})`);
  t.deepEqual(missing, []);
});

test.serial("each instance reports its start time, maintenance state and the database's job timestamps", async (t) => {
  const text = await (await fetch(cluster.metricsUrl)).text();
  for (const worker of ['1', '2']) {
    const started = new RegExp(`^process_start_time_seconds\\{role="instance",worker="${worker}"\\} (\\d+)`, 'm').exec(text);
    t.truthy(started, `start time of worker ${worker}`);
    t.true(Math.abs(Number(started![1]) - Date.now() / 1000) < 3600);
    t.regex(text, new RegExp(`^backplane_maintenance_enabled\\{role="instance",worker="${worker}"\\} 0$`, 'm'));
    t.regex(
      text,
      new RegExp(`^backplane_job_last_success_timestamp_seconds\\{job_name="ratelimit_cleanup",role="instance",worker="${worker}"\\} 1767225610$`, 'm'),
    );
    t.regex(
      text,
      new RegExp(`^backplane_job_last_failure_timestamp_seconds\\{job_name="ratelimit_cleanup",role="instance",worker="${worker}"\\} 1767312020$`, 'm'),
    );
  }
});

test.serial('the maintenance gauge follows the setting on every instance', async (t) => {
  const switched = await runCli(['maintenance', 'on', '--reason', 'deploy test'], { DATABASE_URL: db.url });
  t.is(switched.code, 0, switched.stderr);
  const text = await waitFor(
    async () => {
      const body = await (await fetch(cluster.metricsUrl)).text();
      return ['1', '2'].every((worker) => body.includes(`backplane_maintenance_enabled{role="instance",worker="${worker}"} 1`)) ? body : undefined;
    },
    20_000,
    'both instances to report maintenance on',
  );
  t.notRegex(text, /^backplane_maintenance_enabled\{[^}]*\} 0$/m);
});
