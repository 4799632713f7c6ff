import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { stringify } from 'yaml';
import { kitWithSecrets, kustomize, root } from './manifests.ts';
import { ensurePromtool } from './promtool.ts';

interface Link {
  title: string;
  url: string;
}
interface Panel {
  type: string;
  title: string;
  description?: string;
  links?: Link[];
  targets?: { expr: string }[];
}
interface Dashboard {
  panels: Panel[];
  links: Link[];
  templating: { list: { name: string }[] };
}

const text = readFileSync(join(root, 'deploy', 'grafana', 'backplane.json'), 'utf8');
const dashboard = JSON.parse(text) as Dashboard;
const charts = dashboard.panels.filter((panel) => panel.type !== 'row');
const runbookFile = (url: string) => join(root, 'deploy', 'runbooks', `${/^\$\{backplane_url\}\/docs\/runbooks\/(\w+)$/.exec(url)?.[1] ?? 'none'}.md`);

test('the monitoring component ships the dashboard as a ConfigMap labelled grafana_dashboard', (t) => {
  // The production overlay generates its Secret from files create-secret.sh writes (git-ignored): render a copy that has them.
  const maps = kustomize('overlays/production', kitWithSecrets()).filter(
    (manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.labels?.grafana_dashboard === '1',
  );
  t.is(maps.length, 1);
  t.deepEqual(JSON.parse((maps[0]!.data as Record<string, string>)['backplane.json']!), dashboard);
  t.false(kustomize('base').some((manifest) => manifest.metadata.labels?.grafana_dashboard !== undefined));
});

test('the dashboard has $job, $namespace and $pod, and every query filters on all three', (t) => {
  t.deepEqual(
    ['job', 'namespace', 'pod'].filter((name) => !dashboard.templating.list.some((variable) => variable.name === name)),
    [],
  );
  const exprs = charts.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  t.true(exprs.length > 20);
  // Every series selector, not only every query: a ratio's denominator must be filtered too.
  const unfiltered = exprs.flatMap((expr) =>
    [...expr.matchAll(/\b[a-z_:]+\{([^}]*)\}/g)]
      .filter(([, matchers]) => !['job=~"$job"', 'namespace=~"$namespace"', 'pod=~"$pod"'].every((matcher) => matchers!.includes(matcher)))
      .map(([selector]) => selector),
  );
  t.deepEqual(unfiltered, []);
  t.true(exprs.every((expr) => /\{/.test(expr)));
});

test('every panel has a description, and its runbook links lead to runbooks that exist', (t) => {
  t.deepEqual(
    charts.filter((panel) => !panel.description?.trim()).map((panel) => panel.title),
    [],
  );
  const links = charts.flatMap((panel) => panel.links ?? []);
  t.true(links.length > 5);
  t.deepEqual(
    links.filter((link) => !existsSync(runbookFile(link.url))).map((link) => link.url),
    [],
  );
});

test('the dashboard links to the runbooks and to the console on the instances, through its one backplane_url', (t) => {
  t.is(dashboard.links.find((link) => link.title === 'Runbooks')?.url, '${backplane_url}/docs/runbooks');
  t.is(dashboard.links.find((link) => link.title === 'Console')?.url, '${backplane_url}/console');
  const variable = dashboard.templating.list.find((entry) => entry.name === 'backplane_url') as { type?: string; query?: string } | undefined;
  t.is(variable?.type, 'constant');
  t.regex(variable?.query ?? '', /^https:\/\/[^/]+$/);
  // Its one copy: the monitoring component replaces it with the overlay's APP_PUBLIC_URL (test/deploy/runbookLinks.test.ts).
  t.is(text.split(variable!.query!).length, 2);
});

test("the dashboard type-checks against @grafana/schema's Dashboard, and the check catches a wrong one", async (t) => {
  // Written where @grafana/schema resolves from; a literal (not a JSON import) keeps Grafana's string unions.
  const folder = mkdtempSync(join(root, 'node_modules', '.cache', 'dashboard-check-'));
  try {
    const source = (body: string) => `import type { Dashboard } from '@grafana/schema';\nexport const dashboard: Dashboard = ${body};\n`;
    writeFileSync(join(folder, 'shipped.ts'), source(text));
    writeFileSync(join(folder, 'wrong.ts'), source(JSON.stringify({ ...dashboard, schemaVersion: '39', graphTooltip: 7 })));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2023', '--types', 'node'];
    const output = await promisify(execFile)(process.execPath, [tsc, ...args, join(folder, 'shipped.ts'), join(folder, 'wrong.ts')]).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    t.regex(output, /wrong\.ts\(\d+,\d+\): error TS/);
    t.notRegex(output, /shipped\.ts/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

/** A panel's query with Grafana's variables as the shipped dashboard starts: job backplane, every namespace and pod. */
const asQueried = (expr: string) =>
  expr.replaceAll('$__rate_interval', '1m').replaceAll('=~"$job"', '=~"backplane"').replaceAll('=~"$namespace"', '=~".*"').replaceAll('=~"$pod"', '=~".*"');

test('the 5xx ratio is 0 while requests succeed, not "No data", and the share of 5xx once they fail (evaluated by promtool)', (t) => {
  const panel = charts.find((chart) => chart.title === 'Error ratio (5xx)')!;
  const expr = asQueried(panel.targets![0]!.expr);
  const series = (status: string, values: string) => ({
    series: `backplane_http_request_duration_seconds_count{job="backplane", namespace="test", pod="backplane-0", route="/ops/system", method="GET", status="${status}"}`,
    values,
  });
  const folder = mkdtempSync(join(tmpdir(), 'backplane-dashboard-'));
  try {
    // Only 200s for 10 minutes; then 5xx at a quarter of the rate (1 of 4 requests a minute).
    const cases = {
      rule_files: [],
      evaluation_interval: '1m',
      tests: [
        { interval: '1m', input_series: [series('200', '0+60x10')], promql_expr_test: [{ expr, eval_time: '5m', exp_samples: [{ labels: '{}', value: 0 }] }] },
        {
          interval: '1m',
          input_series: [series('200', '0+45x10'), series('503', '0+15x10')],
          promql_expr_test: [{ expr, eval_time: '5m', exp_samples: [{ labels: '{}', value: 0.25 }] }],
        },
      ],
    };
    writeFileSync(join(folder, 'dashboard.test.yaml'), stringify(cases));
    const output = execFileSync(ensurePromtool(), ['test', 'rules', 'dashboard.test.yaml'], {
      cwd: folder,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.regex(output, /SUCCESS/);
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    t.fail(`promtool: ${stdout ?? ''}${stderr ?? (error as Error).message}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
