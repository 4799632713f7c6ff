import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { listMigrationFiles, migrateUp } from '../platform/db/migrations.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { runDoctor } from './doctor.ts';
import type { CheckResult } from './doctorChecks.ts';
import { printJson, printTable } from './output.ts';
import { RELEASES, type ReleaseNotes } from './releases/notes.ts';
import { ACTION_CHECKS, type Evaluation } from './upgradeChecks.ts';
import { withServices } from './services.ts';

export const LOCK_FILE = 'backplane.lock';
export const LOCK_FORMAT = 2;
const DEFAULT_OVERLAY = 'deploy/kubernetes/overlays/production';

/** backplane.lock, format 2: what the deployment runs, so the next upgrade needs no --from. */
export interface LockFile {
  format: 2;
  release: string;
  /** The newest migration the release ships. */
  migration: number;
  image: string;
  overlay: string;
  previous_release: string;
  upgraded_at: string;
}

/** v0.5, 0.5 and 0.5.0 are one release; a pre-release (0.6.0-dev) comes before its release. */
export function normalizeVersion(text: string): string | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?(-[0-9A-Za-z.-]+)?$/.exec(text.trim());
  return match ? `${match[1]}.${match[2]}.${match[3] ?? '0'}${match[4] ?? ''}` : undefined;
}

export function compareVersions(a: string, b: string): number {
  const parse = (text: string) => {
    const [core, pre] = text.split(/-(.*)/s, 2) as [string, string | undefined];
    return { parts: core.split('.').map(Number), pre };
  };
  const left = parse(a);
  const right = parse(b);
  for (let i = 0; i < 3; i += 1) {
    if (left.parts[i] !== right.parts[i]) {
      return left.parts[i]! - right.parts[i]!;
    }
  }
  if (left.pre === right.pre) {
    return 0;
  }
  return left.pre === undefined ? 1 : right.pre === undefined ? -1 : left.pre < right.pre ? -1 : 1;
}

class Refused extends Error {}

/** What `upgrade --json` prints: one document, the same whether it was a dry run or not. */
export interface UpgradeReport {
  from: string;
  to: string;
  dir: string;
  dry_run: boolean;
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

function git(dir: string, args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function readLock(dir: string): LockFile | undefined {
  const path = join(dir, LOCK_FILE);
  if (!existsSync(path)) {
    return undefined;
  }
  const lock = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockFile>;
  if (lock.format !== LOCK_FORMAT || typeof lock.release !== 'string') {
    throw new Refused(`${path} is not a format ${LOCK_FORMAT} lock file: move it away and pass --from vX.Y, the release this deployment runs`);
  }
  return lock as LockFile;
}

/** Sets the backplane image's tag in the overlay, keeping its comments; returns the new text and image. */
function retagOverlay(text: string, tag: string): { text: string; image: string; replicas: number } {
  const document = parseDocument(text);
  const images = document.get('images') as { items?: Array<{ get(key: string): unknown; set(key: string, value: unknown): void }> } | undefined;
  const entry = images?.items?.find((item) => item.get('name') === 'backplane');
  if (!entry) {
    throw new Refused('the overlay has no images entry named backplane: add one (name: backplane, newName: your registry) and run again');
  }
  entry.set('newTag', tag);
  const replicaItems = (document.get('replicas') as { items?: Array<{ get(key: string): unknown }> } | undefined)?.items ?? [];
  const replicas = Number(replicaItems.find((item) => item.get('name') === 'backplane')?.get('count') ?? 1);
  return { text: document.toString(), image: `${String(entry.get('newName') ?? 'backplane')}:${tag}`, replicas };
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
 */
export async function upgrade(flags: Flags): Promise<number> {
  try {
    return await run(flags);
  } catch (error) {
    if (error instanceof Refused) {
      console.error(`backplane: upgrade refused: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

async function run(flags: Flags): Promise<number> {
  const dir = resolve(flag(flags, 'dir') ?? '.');
  const overlayDir = flag(flags, 'overlay') ?? DEFAULT_OVERLAY;
  const dryRun = hasFlag(flags, 'dry-run');
  const json = hasFlag(flags, 'json');
  // With --json, stdout carries the one document; what people read goes nowhere.
  const say = json ? () => undefined : (line: string) => console.log(line);
  const lock = readLock(dir);
  const fromText = flag(flags, 'from');
  const from = fromText === undefined ? lock?.release : normalizeVersion(fromText);
  if (fromText !== undefined && !from) {
    throw new UsageError(`--from ${fromText} is not a release name such as v0.5`);
  }
  if (!from) {
    throw new UsageError(`no ${LOCK_FILE} in ${dir}: pass --from vX.Y, the release that created this deployment`);
  }
  if (lock && fromText !== undefined && compareVersions(from, lock.release) !== 0) {
    throw new Refused(`${LOCK_FILE} says this deployment runs ${lock.release}, not ${from}: drop --from, or fix the lock file`);
  }
  const to = normalizeVersion(flag(flags, 'to') ?? loadBuildInfo().version);
  if (!to) {
    throw new UsageError(`--to ${flag(flags, 'to')} is not a release name such as v0.6`);
  }
  if (compareVersions(to, normalizeVersion(loadBuildInfo().version)!) > 0) {
    throw new Refused(`this backplane is ${loadBuildInfo().version} and cannot upgrade to ${to}: run the newer release's backplane upgrade`);
  }
  if (compareVersions(to, from) <= 0) {
    throw new Refused(
      compareVersions(to, from) === 0 ? `the deployment already runs ${to}: nothing to upgrade` : `${to} is older than ${from}: upgrade never goes backwards; roll back by reverting the deployment repository`,
    );
  }
  try {
    git(dir, ['rev-parse', '--is-inside-work-tree']);
  } catch {
    throw new Refused(`${dir} is not a git repository: run upgrade in the deployment repository (--dir PATH)`);
  }
  if (git(dir, ['status', '--porcelain'])) {
    throw new Refused(`${dir} has uncommitted changes: commit or stash them, then run upgrade again`);
  }
  const branch = `backplane-upgrade/${to}`;
  if (git(dir, ['branch', '--list', branch])) {
    throw new Refused(`branch ${branch} already exists in ${dir}: merge or delete it first`);
  }
  const kustomization = join(dir, overlayDir, 'kustomization.yaml');
  if (!existsSync(kustomization)) {
    throw new Refused(`no ${kustomization}: pass --overlay PATH, the kustomize overlay that deploys backplane`);
  }
  const overlayText = readFileSync(kustomization, 'utf8');
  const retagged = retagOverlay(overlayText, to);
  const releases = RELEASES.filter((release) => compareVersions(release.version, from) > 0 && compareVersions(release.version, to) <= 0);

  progress('evaluating release notes against the database');
  const evaluated = await withDatabase(
    (pool, { url, config }) =>
      withServices(pool, url, config, async (services) => {
        const context = { pool, config, services, overlay: overlayText, replicas: retagged.replicas };
        const results: Array<{ release: ReleaseNotes; change: ReleaseNotes['changes'][number]; evaluation?: Evaluation }> = [];
        for (const release of releases) {
          for (const change of release.changes) {
            results.push({ release, change, ...(change.check ? { evaluation: await ACTION_CHECKS[change.check](context) } : {}) });
          }
        }
        return results;
      }),
    { migrate: false },
  );
  say(`upgrade ${from} → ${to} in ${dir}${dryRun ? ' (dry run: nothing changes)' : ''}`);
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
    dir,
    dry_run: dryRun,
    releases: releases.map((release) => ({
      version: release.version,
      changes: evaluated
        .filter((item) => item.release === release)
        .map((item) => ({
          change: item.change.change,
          action: item.change.action,
          check: item.change.check ?? null,
          needed: item.evaluation?.needed ?? null,
          finding: item.evaluation?.finding ?? null,
        })),
    })),
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
    say(`\nwould create branch ${branch}, set the image to ${retagged.image} in ${overlayDir}, write ${LOCK_FILE} and commit; then apply migrations and run doctor`);
    if (json) {
      printJson(report);
    }
    return 0;
  }
  progress(`committing on ${branch}`);
  git(dir, ['checkout', '-q', '-b', branch]);
  writeFileSync(kustomization, retagged.text);
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify(lockFile, null, 2)}\n`);
  git(dir, ['add', '--', join(overlayDir, 'kustomization.yaml'), LOCK_FILE]);
  git(dir, ['commit', '-q', '-m', `Upgrade backplane ${from} → ${to}\n\nImage ${retagged.image}; ${LOCK_FILE} format ${LOCK_FORMAT}. Written by backplane upgrade.`]);
  report.committed = true;
  report.commit = git(dir, ['rev-parse', 'HEAD']);
  say(`\ncommitted on branch ${branch}: image ${retagged.image}, ${LOCK_FILE}`);
  progress('applying migrations under the advisory lock');
  report.migrations_applied = await withDatabase((pool) => migrateUp(pool), { migrate: false });
  say(report.migrations_applied.length ? `applied ${report.migrations_applied.length} migration(s)` : 'no migration to apply');
  progress('running doctor');
  report.doctor = await runDoctor({ positional: [], values: new Map() });
  if (json) {
    printJson(report);
  } else {
    say('\ndoctor:');
    printTable(['STATUS', 'CHECK', 'FINDING'], report.doctor.checks.map((result) => [result.status, result.check, result.message]));
    say(`\nnext: review and merge ${branch}, then deploy; merging and deploying stay yours`);
  }
  return report.doctor.ok ? 0 : 1;
}
