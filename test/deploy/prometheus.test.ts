import { readFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { send } from '../support/forwarded.ts';
import { type ActiveAlert, SKIP_REASON, type TestPrometheus, prometheusPath, startPrometheus } from '../support/prometheus.ts';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import { sleep } from '../../src/platform/time.ts';
import { readYaml } from './manifests.ts';

// A real Prometheus (Debian's package) scrapes a live cluster with the shipped rules, and each fault
// brings up the alert it should. The rules are a test copy with every `for` shortened to 2s, so an
// alert goes pending, then firing, within seconds; expressions, labels and windows are the shipped ones.
const SCRAPE_SECONDS = 2;
const LABELS = { namespace: 'test', pod: 'backplane-0' };
const serial = prometheusPath ? test.serial : test.skip;
if (!prometheusPath) {
  test.skip(`alerts in a real Prometheus: ${SKIP_REASON}`, () => undefined);
}

let server: StoppableDatabase;
let cluster: TestCluster;
let prometheus: TestPrometheus;

function shortenedRules(): unknown {
  const rules = readYaml<{ groups: { rules: { for?: string }[] }[] }>('deploy/prometheus/rules.yaml');
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    if (rule.for) {
      rule.for = '2s';
    }
  }
  return rules;
}

test.before(async () => {
  if (!prometheusPath) {
    return;
  }
  server = await startStoppableDatabase();
  cluster = await startCluster(server.url, 2, { APP_TRUSTED_PROXIES: '127.0.0.1/32', APP_HEARTBEAT_SECONDS: '1', APP_JOB_WORKERS: '0' });
  prometheus = await startPrometheus({ target: new URL(cluster.metricsUrl).host, rules: shortenedRules(), scrapeSeconds: SCRAPE_SECONDS, labels: LABELS });
});

test.after.always(async () => {
  server?.thaw();
  await cluster?.stop();
  await prometheus?.stop();
  await server?.remove();
});

const active = (alerts: ActiveAlert[], name: string, labels: Record<string, string> = {}) =>
  alerts.find((alert) => alert.labels.alertname === name && Object.entries(labels).every(([key, value]) => alert.labels[key] === value));

/** Waits for the alert to be pending or firing in Prometheus, and checks the labels the kit routes by. */
async function seeAlert(t: ExecutionContext, name: string, labels: Record<string, string> = {}): Promise<ActiveAlert> {
  const alert = await waitFor(async () => active(await prometheus.alerts(), name, labels), 60_000, `${name} to go pending or firing`);
  t.true(['pending', 'firing'].includes(alert.state), name);
  t.true(['critical', 'warning', 'info'].includes(alert.labels.severity ?? ''), name);
  return alert;
}

/** The primary's forked instances: its children, as Linux lists them. */
function instancePids(): number[] {
  const pid = cluster.process.pid!;
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

serial('Prometheus scrapes the cluster under job="backplane", and the restart counter starts at 0', async (t) => {
  await waitFor(async () => ((await prometheus.query('up{job="backplane"} == 1')).length === 1 ? true : undefined), 60_000, 'a successful scrape');
  const restarts = await waitFor(
    async () => {
      const samples = await prometheus.query('backplane_instance_restarts_total{job="backplane"}');
      return samples.length > 0 ? samples : undefined;
    },
    30_000,
    'the restart counter',
  );
  t.deepEqual(
    restarts.map((sample) => sample.value[1]),
    restarts.map(() => '0'),
  );
  t.true(restarts.every((sample) => sample.metric.role === 'primary'));
  // No series lost its name to `exported_job` or `exported_instance`.
  t.deepEqual(await prometheus.query('count({job="backplane", exported_job!=""} or {job="backplane", exported_instance!=""})'), []);
  t.falsy(active(await prometheus.alerts(), 'BackplaneInstanceRestarted'));
});

serial('an instance killed: BackplaneInstanceRestarted, from its very first restart', async (t) => {
  const [victim] = instancePids();
  t.truthy(victim);
  process.kill(victim!, 'SIGKILL');
  const alert = await seeAlert(t, 'BackplaneInstanceRestarted', { reason: 'exited', ...LABELS });
  t.is(alert.labels.severity, 'info');
  await waitFor(async () => (instancePids().length === 2 && (await fetch(`${cluster.url}/livez`)).ok ? true : undefined), 60_000, 'the instance back');
});

serial('the primary stalled again and again: BackplanePrimaryEventLoopLag', async (t) => {
  // Stopped 200 ms of every 250 for 6 s: a good share of its event loop's turns come late, so the p99 lag shows it.
  const pid = cluster.process.pid!;
  try {
    for (let stalls = 0; stalls < 24; stalls += 1) {
      process.kill(pid, 'SIGSTOP');
      await sleep(200);
      process.kill(pid, 'SIGCONT');
      await sleep(50);
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await seeAlert(t, 'BackplanePrimaryEventLoopLag', LABELS);
});

serial('the database frozen: the limiter decides alone and checkouts are given up', async (t) => {
  server.freeze();
  try {
    // Sign-ins from many addresses: each needs a rate-limit decision (which falls back) and the database.
    await Promise.all(
      Array.from({ length: 30 }, (_v, index) =>
        send(cluster.url, { path: '/auth/sign-in', forwardedFor: `198.51.100.${index + 1}`, body: {} }).catch(() => undefined),
      ),
    );
    await seeAlert(t, 'BackplaneRateLimitDecidingAlone', LABELS);
    await seeAlert(t, 'BackplaneAcquiresCanceled', LABELS);
  } finally {
    server.thaw();
  }
});

serial('the cluster stopped: BackplaneTargetDown', async (t) => {
  await cluster.stop();
  const alert = await seeAlert(t, 'BackplaneTargetDown', LABELS);
  t.is(alert.labels.severity, 'critical');
});
