import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { migrationsDir } from '../platform/db/migrations.ts';
import { useApplicationMigrations, useModuleMigrations } from '../platform/db/migrationSets.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import type { ApplicationLock } from './applicationLock.ts';
import type { CheckResult } from './doctorChecks.ts';
import { dependencySpec } from './dependencySpec.ts';
import { printJson } from './output.ts';
import { RELEASES } from './releases/notes.ts';
import { evaluateReleases, releaseReport } from './upgradeChecks.ts';
import { LOCK_FILE } from './upgradeLock.ts';
import { applyUpgrade } from './upgradeApplicationSteps.ts';
import { UpgradeRefused, fileInRepository, git } from './upgradeRepository.ts';
import type { UpgradeStep } from './upgradeSteps.ts';
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
  releases: Array<{
    version: string;
    changes: Array<{ change: string; action: string; check: string | null; needed: boolean | null; finding: string | null }>;
  }>;
  branch: string;
  package: string;
  lock: ApplicationLock | null;
  /** npm install, loading the application, migrate up and doctor (on a throw-away database), npm test: each as it ended; null where not reached. */
  steps: {
    install: boolean | null;
    load: boolean | null;
    migrate: boolean | null;
    tests: boolean | null;
    doctor: { ok: boolean; checks: CheckResult[] } | null;
  };
  /** The throw-away database the migrations and doctor ran on: a copy of the developer's, or an empty one and why. */
  database: { copy: boolean; why_not_a_copy: string | null } | null;
  /** The step that failed, its exit code and the first line of why; null on success. */
  failed: { step: UpgradeStep; exit_code: number; reason: string } | null;
  /** True when a failed or interrupted upgrade put the working tree back. */
  restored: boolean;
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

function replicasOf(overlay: string): number {
  const document = parseDocument(overlay);
  const entries = document.get('replicas');
  const named = isSeq(entries) ? entries.items.filter(isMap).find((item) => item.get('name') === 'backplane') : undefined;
  return Number(named?.get('count') ?? 1);
}

/** The migrations folders of the application's modules where `new` puts them (src/modules/<name>/migrations): read without composing the application. */
function moduleMigrationFolders(dir: string): { set: string; dir: string }[] {
  const modules = join(dir, 'src', 'modules');
  return existsSync(modules)
    ? readdirSync(modules, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => ({ set: entry.name, dir: join(modules, entry.name, 'migrations') }))
    : [];
}

/**
 * `upgrade` in an application (ADR 0111 amended, ADR 0133): evaluates the release notes against
 * its database and overlay, then bumps and installs backplane, loads the application, applies the
 * migrations to a throw-away database, runs its tests and doctor (through the application's own
 * CLI, the new release composed with its modules) and commits on branch backplane-upgrade/<to>.
 * A failing or interrupted step puts the working tree back, says so in one line and exits with the
 * step's code; the developer's database is never migrated by upgrade.
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
  const migrationFolders = [join(dir, 'migrations'), ...moduleMigrationFolders(dir).map((folder) => folder.dir)];
  const evaluated = await evaluateReleases(releases, overlay, replicasOf(overlay), {
    release: { dir: migrationsDir, version: build },
    folders: migrationFolders,
  });
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
    steps: { install: null, load: null, migrate: null, tests: null, doctor: null },
    database: null,
    failed: null,
    restored: false,
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
    say(
      `\nwould set backplane to ${spec} and npm install, load the application, apply the migrations to a throw-away copy of the database, run npm test and doctor, then write ${LOCK_FILE} and commit on branch ${branch}; a failure would put everything back`,
    );
    return finish(0);
  }
  const code = await applyUpgrade({ dir, from, to, spec, branch, migrationFolders, report });
  if (code === 0 && !json && report.steps.doctor) {
    say(
      `\ncommitted on branch ${branch}: backplane ${spec}, ${LOCK_FILE}; the application loads, the migrations apply to ${report.database?.copy ? 'a copy of your database' : 'a fresh database'}, its tests pass`,
    );
    say('\ndoctor:');
    report.steps.doctor.checks.forEach((result) => say(`  ${result.status.padEnd(5)} ${result.check.padEnd(16)} ${result.message}`));
    say('\nyour database is as it was: npm start (or npx backplane migrate up) applies the new migrations to it');
    say(`next: review and merge ${branch}, then deploy; merging and deploying stay yours`);
  }
  return finish(code);
}
