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
  const fired = new Set(cases.tests.flatMap((entry) => entry.alert_rule_test.filter((check) => (check.exp_alerts ?? []).length > 0).map((check) => check.alertname)));
  t.deepEqual(rules.map((rule) => rule.alert).filter((alert) => !fired.has(alert)), []);
});

test('the retention alert names the retention job as the code does', (t) => {
  t.true(rules.find((rule) => rule.alert === 'BackplaneRetentionMissed')!.expr.includes(`exported_job="${RETENTION_JOB}"`));
});

test('every alert has a summary, a description and a runbook that exists', (t) => {
  for (const rule of rules) {
    t.truthy(rule.annotations.summary, rule.alert);
    t.truthy(rule.annotations.description, rule.alert);
    t.is(rule.annotations.runbook_url, `deploy/runbooks/${rule.alert}.md`);
    t.true(existsSync(join(root, rule.annotations.runbook_url!)), rule.alert);
    t.true(readFileSync(join(root, rule.annotations.runbook_url!), 'utf8').startsWith(`# ${rule.alert}\n`), rule.alert);
  }
});

test('the PrometheusRule and the dashboard are what scripts/monitoring.mjs makes of their sources', (t) => {
  t.notThrows(() => execFileSync(process.execPath, [join(root, 'scripts', 'monitoring.mjs'), '--check'], { stdio: 'pipe' }));
});
