import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { RETENTION_JOB } from '../../src/modules/retention/kinds.ts';
import { readYaml, root } from './manifests.ts';
import { ensurePromtool } from './promtool.ts';

interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}

const rules = readYaml<{ groups: { rules: Rule[] }[] }>('deploy/prometheus/rules.yaml').groups.flatMap((group) => group.rules);
const promtool = ensurePromtool();
const run = (args: string[]) => execFileSync(promtool, args, { cwd: join(root, 'deploy', 'prometheus'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('promtool accepts the rules and their unit tests pass', (t) => {
  t.regex(run(['check', 'rules', 'rules.yaml']), /SUCCESS/);
  t.regex(run(['test', 'rules', 'rules.test.yaml']), /SUCCESS/);
});

test('every alert has a unit test that sees it fire', (t) => {
  const cases = readYaml<{ tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[] }>('deploy/prometheus/rules.test.yaml');
  const fired = new Set(
    cases.tests.flatMap((entry) => entry.alert_rule_test.filter((check) => (check.exp_alerts ?? []).length > 0).map((check) => check.alertname)),
  );
  t.deepEqual(
    rules.map((rule) => rule.alert).filter((alert) => !fired.has(alert)),
    [],
  );
});

test('the retention alert names the retention job as the code does', (t) => {
  for (const alert of ['BackplaneRetentionMissed', 'BackplaneRetentionNeverSucceeded']) {
    t.true(rules.find((rule) => rule.alert === alert)!.expr.includes(`job_name="${RETENTION_JOB}"`), alert);
  }
});

test('every alert has a summary, a description and a runbook that exists', (t) => {
  for (const rule of rules) {
    t.truthy(rule.annotations.summary, rule.alert);
    t.truthy(rule.annotations.description, rule.alert);
    const url = new URL(rule.annotations.runbook_url!);
    t.is(url.protocol, 'https:', rule.alert);
    // Served by every instance (src/console/sites.ts; test/deploy/runbookLinks.test.ts follows each link).
    t.is(url.pathname, `/docs/runbooks/${rule.alert}`, rule.alert);
    const file = join(root, 'deploy', 'runbooks', `${rule.alert}.md`);
    t.true(existsSync(file), rule.alert);
    t.true(readFileSync(file, 'utf8').startsWith(`# ${rule.alert}\n`), rule.alert);
  }
});

test("every runbook_url starts with the production overlay's APP_PUBLIC_URL, which the monitoring component replaces", (t) => {
  const placeholder = /^const PUBLIC_URL = '(https:\/\/[^'/]+)';$/m.exec(readFileSync(join(root, 'scripts', 'monitoring.mjs'), 'utf8'))?.[1];
  t.truthy(placeholder);
  t.regex(
    readFileSync(join(root, 'deploy', 'kubernetes', 'overlays', 'production', 'kustomization.yaml'), 'utf8'),
    new RegExp(`^\\s+- APP_PUBLIC_URL=${placeholder}$`, 'm'),
  );
  t.deepEqual(
    rules.filter((rule) => rule.annotations.runbook_url !== `${placeholder}/docs/runbooks/${rule.alert}`).map((rule) => rule.alert),
    [],
  );
});

test("severities are kube-prometheus's: critical, warning, info", (t) => {
  const severities = readYaml<{ groups: { rules: { labels: { severity: string } }[] }[] }>('deploy/prometheus/rules.yaml').groups.flatMap((group) =>
    group.rules.map((rule) => rule.labels.severity),
  );
  t.deepEqual(
    severities.filter((severity) => !['critical', 'warning', 'info'].includes(severity)),
    [],
  );
});

test("absent-data rules watch the retention job's success and the scrape target", (t) => {
  const expr = (alert: string) => rules.find((rule) => rule.alert === alert)?.expr ?? '';
  t.regex(expr('BackplaneTargetAbsent'), /^absent\(up\{job="backplane"\}\)$/);
  t.regex(expr('BackplaneRetentionNeverSucceeded'), /^absent\(backplane_job_last_success_timestamp_seconds\{job_name="retention"\}\)$/);
});

test('the PrometheusRule and the dashboard are what scripts/monitoring.mjs makes of their sources', (t) => {
  t.notThrows(() => execFileSync(process.execPath, [join(root, 'scripts', 'monitoring.mjs'), '--check'], { stdio: 'pipe' }));
});
