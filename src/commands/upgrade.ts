import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { ConfigError } from '../app/config.ts';
import { listMigrationFiles, migrateUp } from '../platform/db/migrations.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { runDoctor } from './doctor.ts';
import type { CheckResult } from './doctorChecks.ts';
import { printJson, printTable } from './output.ts';
import { RELEASES } from './releases/notes.ts';
import { evaluateReleases, releaseReport } from './upgradeChecks.ts';
import { LOCK_FILE, LOCK_FORMAT, type LockFile, readLock } from './upgradeLock.ts';
import { isApplication, upgradeApplication } from './upgradeApplication.ts';
import { UpgradeRefused, commitOnBranch, fileInRepository, git, oneLine, openRepository } from './upgradeRepository.ts';
import { compareVersions, normalizeVersion } from './upgradeVersions.ts';

const DEFAULT_OVERLAY = 'deploy/kubernetes/overlays/production';

/** What `upgrade --json` prints: one document, the same whether it was a dry run or not. */
export interface UpgradeReport {
  from: string;
  to: string;
  dir: string;
  dry_run: boolean;
  /** True when the deployment already runs the target: nothing was evaluated or changed (exit 0). */
  nothing_to_do: boolean;
  releases: Array<{
    version: string;
    changes: Array<{ change: string; action: string; check: string | null; needed: boolean | null; finding: string | null }>;
  }>;
  branch: string;
  image: string;
  overlay: string;
  lock: LockFile;
  committed: boolean;
  /** The commit on the branch; null on a dry run. */
  commit: string | null;
  /** Migration names applied after the commit, in order. */
  migrations_applied: string[];
  /** doctor's result after the migrations; null on a dry run. */
  doctor: { ok: boolean; checks: CheckResult[] } | null;
}

/** What `upgrade --json` prints when the deployment already runs the target: the report without a plan. */
export type NothingToDo = Omit<UpgradeReport, 'nothing_to_do' | 'branch' | 'image' | 'overlay' | 'lock'> & { nothing_to_do: true };

/** Sets the backplane image's tag in the overlay, keeping its comments; returns the new text, the image and the tag it had. */
function retagOverlay(path: string, text: string, tag: string): { text: string; image: string; replicas: number; current: unknown } {
  const document = parseDocument(text);
  if (document.errors.length) {
    throw new UpgradeRefused(`${path} is not YAML (${oneLine(document.errors[0])})`);
  }
  const named = (list: unknown) => (isSeq(list) ? list.items.filter(isMap).find((item) => item.get('name') === 'backplane') : undefined);
  const entry = named(document.get('images'));
  if (!entry) {
    throw new UpgradeRefused(`${path} has no images entry named backplane: add one (name: backplane, newName: your registry) and run again`);
  }
  const current = entry.get('newTag');
  entry.set('newTag', tag);
  const replicas = Number(named(document.get('replicas'))?.get('count') ?? 1);
  return { text: document.toString(), image: `${String(entry.get('newName') ?? 'backplane')}:${tag}`, replicas, current };
}

const progress = (line: string) => {
  // People at a terminal see the steps; pipes and logs get only the result (and --json only JSON on stdout).
  if (process.stderr.isTTY) {
    process.stderr.write(`… ${line}\n`);
  }
};

/**
 * `upgrade [--from vX.Y] [--to vX.Y] [--dir PATH] [--overlay PATH] [--dry-run]`: shows each
 * release's actions evaluated against the live database, then on a branch of the deployment
 * repository sets the image tag, writes backplane.lock and commits; then migrates and runs doctor.
 * Every refusal is one line on stderr with exit 1 (2 for a bad flag), before anything changes; so is
 * a failure, which says what is left when it comes after the commit.
 */
export async function upgrade(flags: Flags): Promise<number> {
  try {
    return await run(flags);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      throw error;
    }
    console.error(`backplane: upgrade ${error instanceof UpgradeRefused ? 'refused' : 'failed'}: ${oneLine(error)}`);
    return 1;
  }
}

/** A release name from a flag; one git refuses in a branch name (0.6.0-a.lock) is none. */
function versionFlag(flags: Flags, name: string, dir: string): string | undefined {
  const text = flag(flags, name);
  if (text === undefined) {
    return undefined;
  }
  const version = normalizeVersion(text);
  if (!version) {
    throw new UsageError(`--${name} ${text} is not a release name such as v0.6`);
  }
  if (!validBranch(dir, `backplane-upgrade/${version}`)) {
    throw new UsageError(`--${name} ${text} is not a release name git accepts in a branch name, such as v0.6`);
  }
  return version;
}

function validBranch(dir: string, branch: string): boolean {
  try {
    git(dir, ['check-ref-format', '--branch', branch]);
    return true;
  } catch {
    return false;
  }
}

async function run(flags: Flags): Promise<number> {
  const given = resolve(flag(flags, 'dir') ?? '.');
  const dryRun = hasFlag(flags, 'dry-run');
  const json = hasFlag(flags, 'json');
  // With --json, stdout carries the one document; what people read goes nowhere.
  const say = json ? () => undefined : (line: string) => console.log(line);
  const { dir, root } = openRepository(given);
  const fromFlag = versionFlag(flags, 'from', dir);
  const toFlag = versionFlag(flags, 'to', dir);
  const lockPath = fileInRepository(root, dir, LOCK_FILE, 'the lock file');
  const lock = readLock(lockPath);
  const from = fromFlag ?? lock?.release;
  if (!from) {
    throw new UsageError(`no ${LOCK_FILE} in ${given}: pass --from vX.Y, the release that created this deployment`);
  }
  if (lock && compareVersions(from, lock.release) !== 0) {
    throw new UpgradeRefused(`${LOCK_FILE} says this deployment runs ${lock.release}, not ${from}: drop --from, or fix the lock file`);
  }
  const build = normalizeVersion(loadBuildInfo().version)!;
  if (compareVersions(from, build) > 0) {
    throw new UpgradeRefused(
      `the deployment runs ${from}, newer than this backplane (${build}): upgrade never goes backwards; use the backplane of ${from} or newer`,
    );
  }
  const to = toFlag ?? build;
  if (compareVersions(to, build) > 0) {
    throw new UpgradeRefused(`this backplane is ${build} and cannot upgrade to ${to}: run the newer release's backplane upgrade`);
  }
  if (compareVersions(to, from) < 0) {
    throw new UpgradeRefused(`${to} is older than ${from}: upgrade never goes backwards; roll back by reverting the deployment repository`);
  }
  if (compareVersions(to, from) === 0) {
    // Automation runs upgrade every time: already there is a success with nothing to do.
    if (json) {
      const report: NothingToDo = {
        from,
        to,
        dir: given,
        dry_run: dryRun,
        nothing_to_do: true,
        releases: [],
        committed: false,
        commit: null,
        migrations_applied: [],
        doctor: null,
      };
      printJson(report);
    } else {
      say(`${isApplication(dir) ? 'the application' : 'the deployment'} already runs ${to}: nothing to upgrade`);
    }
    return 0;
  }
  if (isApplication(dir)) {
    return upgradeApplication(flags, dir, root, { from, to, lock });
  }
  if (flag(flags, 'package') !== undefined) {
    throw new UsageError('--package is for an application (a folder whose package.json depends on backplane); a deployment repository sets an image tag');
  }
  if (git(dir, ['status', '--porcelain'])) {
    throw new UpgradeRefused(`${given} has uncommitted changes: commit or stash them, then run upgrade again`);
  }
  const branch = `backplane-upgrade/${to}`;
  if (git(dir, ['branch', '--list', branch])) {
    throw new UpgradeRefused(`branch ${branch} already exists in ${given}: merge or delete it first`);
  }
  const kustomization = fileInRepository(root, dir, resolve(dir, flag(flags, 'overlay') ?? DEFAULT_OVERLAY, 'kustomization.yaml'), 'the overlay');
  const overlayDir = relative(dir, resolve(kustomization, '..')) || '.';
  let overlayText: string;
  try {
    overlayText = readFileSync(kustomization, 'utf8');
  } catch {
    throw new UpgradeRefused(`no ${kustomization}: pass --overlay PATH, the kustomize overlay that deploys backplane`);
  }
  const retagged = retagOverlay(kustomization, overlayText, to);
  const deployed = normalizeVersion(String(retagged.current ?? ''));
  if (deployed && compareVersions(deployed, to) > 0) {
    throw new UpgradeRefused(`${kustomization} already deploys ${deployed}, newer than ${to}: upgrade never goes backwards`);
  }
  const releases = RELEASES.filter((release) => compareVersions(release.version, from) > 0 && compareVersions(release.version, to) <= 0);

  progress('evaluating release notes against the database');
  const evaluated = await evaluateReleases(releases, overlayText, retagged.replicas);
  say(`upgrade ${from} → ${to} in ${given}${dryRun ? ' (dry run: nothing changes)' : ''}`);
  for (const release of releases) {
    say(`\n${release.version}`);
    for (const entry of evaluated.filter((item) => item.release === release)) {
      const mark = entry.evaluation ? (entry.evaluation.needed ? 'ACTION' : 'ok') : '-';
      say(`  ${mark.padEnd(6)}  ${entry.change.change}`);
      say(`          ${entry.evaluation?.finding ?? entry.change.action}`);
    }
  }
  const lockFile: LockFile = {
    format: LOCK_FORMAT,
    release: to,
    migration: Math.max(0, ...listMigrationFiles().map((file) => file.version)),
    image: retagged.image,
    overlay: overlayDir,
    previous_release: from,
    upgraded_at: new Date().toISOString(),
  };
  const report: UpgradeReport = {
    from,
    to,
    dir: given,
    dry_run: dryRun,
    nothing_to_do: false,
    releases: releaseReport(releases, evaluated),
    branch,
    image: retagged.image,
    overlay: overlayDir,
    lock: lockFile,
    committed: false,
    commit: null,
    migrations_applied: [],
    doctor: null,
  };
  if (dryRun) {
    say(
      `\nwould create branch ${branch}, set the image to ${retagged.image} in ${overlayDir}, write ${LOCK_FILE} and commit; then apply migrations and run doctor`,
    );
    if (json) {
      printJson(report);
    }
    return 0;
  }
  progress(`committing on ${branch}`);
  report.commit = commitOnBranch(
    dir,
    branch,
    [
      { path: kustomization, text: retagged.text, existed: true },
      { path: lockPath, text: `${JSON.stringify(lockFile, null, 2)}\n`, existed: lock !== undefined },
    ],
    `Upgrade backplane ${from} → ${to}\n\nImage ${retagged.image}; ${LOCK_FILE} format ${LOCK_FORMAT}. Written by backplane upgrade.`,
  );
  report.committed = true;
  say(`\ncommitted on branch ${branch}: image ${retagged.image}, ${LOCK_FILE}`);
  progress('applying migrations under the advisory lock');
  try {
    report.migrations_applied = await withDatabase((pool) => migrateUp(pool), { schema: 'any' });
  } catch (error) {
    throw new Error(`committed on branch ${branch}, but the migrations failed (${oneLine(error)}): fix the cause and run backplane migrate up`);
  }
  say(report.migrations_applied.length ? `applied ${report.migrations_applied.length} migration(s)` : 'no migration to apply');
  progress('running doctor');
  report.doctor = await runDoctor({ positional: [], values: new Map() });
  if (json) {
    printJson(report);
  } else {
    say('\ndoctor:');
    printTable(
      ['STATUS', 'CHECK', 'FINDING'],
      report.doctor.checks.map((result) => [result.status, result.check, result.message]),
    );
    say(`\nnext: review and merge ${branch}, then deploy; merging and deploying stay yours`);
  }
  return report.doctor.ok ? 0 : 1;
}
