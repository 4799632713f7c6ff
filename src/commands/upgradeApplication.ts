import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { listMigrationFiles } from '../platform/db/migrations.ts';
import { BACKPLANE_SET, useApplicationMigrations, useModuleMigrations } from '../platform/db/migrationSets.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { type ApplicationLock, applicationLock } from './applicationLock.ts';
import type { CheckResult } from './doctorChecks.ts';
import { dependencySpec } from './dependencySpec.ts';
import { printJson } from './output.ts';
import { RELEASES } from './releases/notes.ts';
import { evaluateReleases, releaseReport } from './upgradeChecks.ts';
import { LOCK_FILE } from './upgradeLock.ts';
import { UpgradeRefused, fileInRepository, git, oneLine } from './upgradeRepository.ts';
import { compareVersions, normalizeVersion } from './upgradeVersions.ts';

/** The overlay `new` writes; what the release notes' checks read of the application's configuration. */
const APPLICATION_OVERLAY = 'deploy/kubernetes/overlays/production/kustomization.yaml';

/** True when dir holds an application built on Backplane: its package.json depends on backplane. */
export function isApplication(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; dependencies?: Record<string, string> };
    return pkg.name !== 'backplane' && typeof pkg.dependencies?.backplane === 'string';
  } catch {
    return false;
  }
}

/** What `upgrade --json` prints in an application. */
export interface ApplicationUpgradeReport {
  mode: 'application';
  from: string;
  to: string;
  dir: string;
  dry_run: boolean;
  nothing_to_do: boolean;
  releases: Array<{ version: string; changes: Array<{ change: string; action: string; check: string | null; needed: boolean | null; finding: string | null }> }>;
  branch: string;
  package: string;
  lock: ApplicationLock | null;
  /** npm install, migrate up, npm test and doctor, each as it ended; null where not reached. */
  steps: { install: boolean | null; migrate: boolean | null; tests: boolean | null; doctor: { ok: boolean; checks: CheckResult[] } | null };
  committed: boolean;
  commit: string | null;
}

export interface ApplicationVersions {
  from: string;
  to: string;
  lock: { release: string } | undefined;
}

const progress = (line: string) => {
  if (process.stderr.isTTY) {
    process.stderr.write(`… ${line}\n`);
  }
};

/** Runs npm in the application; its output goes to stderr, so stdout stays the report (--json). */
function npm(dir: string, args: string[], env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<Buffer> {
  return spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: dir, env, stdio: ['ignore', 2, 2] });
}

function replicasOf(overlay: string): number {
  const document = parseDocument(overlay);
  const entries = document.get('replicas');
  const named = isSeq(entries) ? entries.items.filter(isMap).find((item) => item.get('name') === 'backplane') : undefined;
  return Number(named?.get('count') ?? 1);
}

/** The migrations folders of the application's modules where `new` puts them (src/modules/<name>/migrations): read without composing the application. */
function moduleMigrationFolders(dir: string): { set: string; dir: string }[] {
  const modules = join(dir, 'src', 'modules');
  return existsSync(modules) ? readdirSync(modules, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => ({ set: entry.name, dir: join(modules, entry.name, 'migrations') })) : [];
}

/**
 * `upgrade` in an application (ADR 0111, amended 2026-11-26): evaluates the release notes against
 * its database and overlay, then on branch backplane-upgrade/<to> bumps and installs backplane,
 * applies Backplane's and the application's migrations, runs the application's tests and doctor
 * (both through the application's own CLI, the new release composed with its modules) and commits.
 * A failing step stops it with exit 1 and leaves the branch as it is, for inspection.
 */
export async function upgradeApplication(flags: Flags, dir: string, root: string, versions: ApplicationVersions): Promise<number> {
  const { from, to } = versions;
  const dryRun = hasFlag(flags, 'dry-run');
  const json = hasFlag(flags, 'json');
  const say = json ? () => undefined : (line: string) => console.log(line);
  if (flag(flags, 'overlay') !== undefined) {
    throw new UsageError('--overlay is for a deployment repository; in an application the overlay is deploy/kubernetes/overlays/production');
  }
  const build = normalizeVersion(loadBuildInfo().version)!;
  const spec = dependencySpec(flag(flags, 'package'), to === build ? loadBuildInfo().version : to);
  // The application's database holds its migrations too: known, they are not "a newer release".
  useApplicationMigrations(join(dir, 'migrations'));
  useModuleMigrations(moduleMigrationFolders(dir));
  process.env.APP_DATA_DIR ??= join(dir, '.data');
  const branch = `backplane-upgrade/${to}`;
  if (git(dir, ['status', '--porcelain'])) {
    throw new UpgradeRefused(`${dir} has uncommitted changes: commit them, then run upgrade again`);
  }
  if (git(dir, ['branch', '--list', branch])) {
    throw new UpgradeRefused(`branch ${branch} already exists in ${dir}: merge or delete it first`);
  }
  const overlayPath = fileInRepository(root, dir, APPLICATION_OVERLAY, 'the overlay');
  const overlay = existsSync(overlayPath) ? readFileSync(overlayPath, 'utf8') : '';
  const releases = RELEASES.filter((release) => compareVersions(release.version, from) > 0 && compareVersions(release.version, to) <= 0);
  progress('evaluating release notes against the database');
  const evaluated = await evaluateReleases(releases, overlay, replicasOf(overlay));
  say(`upgrade the application in ${dir}: backplane ${from} → ${to}${dryRun ? ' (dry run: nothing changes)' : ''}`);
  for (const release of releases) {
    say(`\n${release.version}`);
    for (const entry of evaluated.filter((item) => item.release === release)) {
      say(`  ${(entry.evaluation ? (entry.evaluation.needed ? 'ACTION' : 'ok') : '-').padEnd(6)}  ${entry.change.change}`);
      say(`          ${entry.evaluation?.finding ?? entry.change.action}`);
    }
  }
  const report: ApplicationUpgradeReport = {
    mode: 'application',
    from,
    to,
    dir,
    dry_run: dryRun,
    nothing_to_do: false,
    releases: releaseReport(releases, evaluated),
    branch,
    package: spec,
    lock: null,
    steps: { install: null, migrate: null, tests: null, doctor: null },
    committed: false,
    commit: null,
  };
  const finish = (code: number, line?: string) => {
    if (line) {
      console.error(`backplane: ${line}`);
    }
    if (json) {
      printJson(report);
    }
    return code;
  };
  if (dryRun) {
    say(`\nwould create branch ${branch}, set backplane to ${spec} and npm install, apply migrations, run npm test and doctor, write ${LOCK_FILE} and commit`);
    return finish(0);
  }
  git(dir, ['checkout', '-q', '-b', branch]);
  const kept = `the branch ${branch} is kept as it is for inspection`;
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { dependencies: Record<string, string>; backplane?: unknown };
  pkg.dependencies.backplane = spec;
  // An application made before its package.json declared the entry: npx backplane there ran Backplane alone (ADR 0132).
  if (pkg.backplane === undefined && existsSync(join(dir, 'src', 'main.ts'))) {
    pkg.backplane = { entry: 'src/main.ts', builtEntry: 'dist/main.js' };
  }
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);

  progress(`npm install (backplane ${spec})`);
  report.steps.install = npm(dir, ['install', '--no-audit', '--no-fund']).status === 0;
  if (!report.steps.install) {
    return finish(1, `upgrade stopped: npm install of backplane ${spec} failed (its output is above); ${kept}`);
  }
  const installed = normalizeVersion(String((JSON.parse(readFileSync(join(dir, 'node_modules', 'backplane', 'package.json'), 'utf8')) as { version?: unknown }).version));
  if (installed !== to) {
    return finish(1, `upgrade stopped: ${spec} installed backplane ${installed ?? 'of no release'}, not ${to}: pass --package with ${to}; ${kept}`);
  }
  // The application's own CLI from here on: the new release composed with the application's modules and migrations.
  progress('applying migrations (Backplane\'s and the application\'s) under the advisory lock');
  report.steps.migrate = npm(dir, ['run', '--silent', 'backplane', '--', 'migrate', 'up']).status === 0;
  if (!report.steps.migrate) {
    return finish(1, `upgrade stopped: the migrations failed (the output is above): fix the cause and run npm run backplane -- migrate up; ${kept}`);
  }
  progress('running the application\'s tests (npm test)');
  // The tests get a throw-away database of their own, never the live one.
  const testEnv = { ...process.env };
  delete testEnv.DATABASE_URL;
  report.steps.tests = npm(dir, ['test'], testEnv).status === 0;
  if (!report.steps.tests) {
    return finish(1, `upgrade stopped: the application's tests failed on backplane ${to} (npm test, output above); ${kept}: fix them there, commit, and merge when they pass`);
  }
  progress('running doctor');
  const doctor = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'backplane', '--', 'doctor', '--json'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 2] });
  try {
    report.steps.doctor = JSON.parse(doctor.stdout) as { ok: boolean; checks: CheckResult[] };
  } catch {
    report.steps.doctor = { ok: false, checks: [{ check: 'doctor', status: 'fail', message: `doctor did not answer (${oneLine(doctor.stderr ?? doctor.error ?? 'no output')})` }] };
  }
  report.lock = applicationLock({ release: to, migration: Math.max(0, ...listMigrationFiles().filter((file) => file.set === BACKPLANE_SET).map((file) => file.version)), spec, previous: from });
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify(report.lock, null, 2)}\n`);
  git(dir, ['add', '--', 'package.json', ...(existsSync(join(dir, 'package-lock.json')) ? ['package-lock.json'] : []), LOCK_FILE]);
  git(dir, ['commit', '-q', '-m', `Upgrade backplane ${from} → ${to}\n\nbackplane ${spec}; migrations applied, npm test and doctor run. Written by backplane upgrade.`]);
  report.commit = git(dir, ['rev-parse', 'HEAD']);
  report.committed = true;
  if (!json) {
    say(`\ncommitted on branch ${branch}: backplane ${spec}, ${LOCK_FILE}; the application's tests passed`);
    say('\ndoctor:');
    report.steps.doctor.checks.forEach((result) => say(`  ${result.status.padEnd(5)} ${result.check.padEnd(16)} ${result.message}`));
    say(`\nnext: review and merge ${branch}, then deploy; merging and deploying stay yours`);
  }
  return finish(report.steps.doctor.ok ? 0 : 1);
}
