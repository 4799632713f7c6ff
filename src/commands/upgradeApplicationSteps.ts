import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { constants } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../app/config.ts';
import { type DatabaseHandle, openDatabase } from '../app/database.ts';
import { applicationLock } from './applicationLock.ts';
import type { CheckResult } from './doctorChecks.ts';
import type { ApplicationUpgradeReport } from './upgradeApplication.ts';
import { appliedMigrationsAt, migrationClash } from './upgradeMigrationClash.ts';
import { UpgradeRefused, git, oneLine } from './upgradeRepository.ts';
import { type WorkingTreeSnapshot, snapshotWorkingTree } from './upgradeRollback.ts';
import { type ScratchDatabase, createScratchDatabase } from './upgradeScratchDatabase.ts';
import { STEP_EXIT_CODES, StepRunner, type UpgradeStep, firstReason } from './upgradeSteps.ts';
import { LOCK_FILE } from './upgradeLock.ts';
import { normalizeVersion } from './upgradeVersions.ts';

export interface UpgradeWork {
  dir: string;
  from: string;
  to: string;
  spec: string;
  branch: string;
  /** The migrations folders of the application and its modules. */
  migrationFolders: string[];
  report: ApplicationUpgradeReport;
}

interface Failure {
  step: UpgradeStep;
  reason: string;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const progress = (line: string) => {
  if (process.stderr.isTTY) {
    process.stderr.write(`… ${line}\n`);
  }
};

/** The environment of a step that must reach the throw-away database and nothing else. */
function scratchEnv(url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url };
  for (const name of ['DATABASE_URL_FILE', 'DATABASE_LISTEN_URL', 'DATABASE_LISTEN_URL_FILE', 'DATABASE_POOLING']) {
    delete env[name];
  }
  return env;
}

const newestMigration = (dir: string) => Math.max(0, ...(existsSync(dir) ? readdirSync(dir) : []).map((name) => Number(/^(\d{14})_/.exec(name)?.[1] ?? 0)));

/**
 * Installs the new release and proves it (the application loads; the migrations apply to a
 * throw-away database; its tests pass; doctor passes on that database); only then commits on the
 * branch. A failure or an interrupt puts the working tree back and leaves the developer's database
 * untouched: it is never migrated by upgrade (ADR 0133). Returns the exit code.
 */
export async function applyUpgrade(work: UpgradeWork): Promise<number> {
  let database: DatabaseHandle;
  try {
    database = await openDatabase(loadConfig());
  } catch (error) {
    if (error instanceof ConfigError) {
      throw error;
    }
    throw new UpgradeRefused(`the database cannot be reached (${oneLine(error)}): check DATABASE_URL; nothing was changed`);
  }
  const log = join(mkdtempSync(join(tmpdir(), 'backplane-upgrade-')), 'output.log');
  const runner = new StepRunner(work.dir, log);
  let interrupted: NodeJS.Signals | undefined;
  const handlers = SIGNALS.map((signal) => {
    const handler = () => {
      if (interrupted) {
        process.stderr.write('backplane: the upgrade is putting the working tree back; it exits when done\n');
        return;
      }
      interrupted = signal;
      runner.stop();
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const at: { step: UpgradeStep } = { step: 'install' };
  let scratch: ScratchDatabase | undefined;
  let snapshot: WorkingTreeSnapshot | undefined;
  let failure: Failure | undefined;
  try {
    try {
      progress(`making a throw-away database beside ${database.description}`);
      scratch = await createScratchDatabase(database.directUrl, database.description);
      work.report.database = { copy: scratch.copy, why_not_a_copy: scratch.why ?? null };
      if (!interrupted) {
        progress('keeping package.json, the lock files and a copy of node_modules, to put back if the upgrade fails');
        snapshot = await snapshotWorkingTree(work.dir);
      }
      failure = interrupted ? { step: 'install', reason: 'interrupted' } : await prove(work, runner, scratch, database, at, () => interrupted !== undefined);
      if (!failure && !interrupted) {
        at.step = 'commit';
        failure = commit(work);
      }
    } catch (error) {
      if (!snapshot) {
        // Before anything changed: a refusal (no throw-away database, a copy left by a killed upgrade) or a plain failure.
        rmSync(join(log, '..'), { recursive: true, force: true });
        throw error instanceof UpgradeRefused ? error : new UpgradeRefused(`${oneLine(error)}; nothing was changed`);
      }
      failure = { step: at.step, reason: oneLine(error) };
    } finally {
      await scratch?.drop().catch(() => undefined);
      await database.release().catch(() => undefined);
    }
    // Committed is done, whatever signal came after.
    if (work.report.committed) {
      await snapshot?.discard();
      rmSync(join(log, '..'), { recursive: true, force: true });
      return 0;
    }
    const step = failure?.step ?? at.step;
    const reason = failure?.reason ?? 'interrupted';
    work.report.failed = { step, exit_code: STEP_EXIT_CODES[step], reason };
    let back = 'nothing was changed: the working tree and your database are as they were';
    try {
      await snapshot?.restore();
      work.report.restored = true;
    } catch (error) {
      back = `the working tree could not be put back (${oneLine(error)}): run ${snapshot?.byHand}; your database is as it was`;
    }
    const what = interrupted ? `upgrade interrupted (${interrupted}) during ${step}` : `upgrade failed at ${step}: ${reason}`;
    console.error(`backplane: ${what}; ${back} (output: ${log})`);
    return interrupted ? 128 + constants.signals[interrupted] : STEP_EXIT_CODES[step];
  } finally {
    handlers.forEach(([signal, handler]) => process.removeListener(signal, handler));
  }
}

/** The steps up to doctor; the first that fails, or undefined when all passed. */
async function prove(
  work: UpgradeWork,
  runner: StepRunner,
  scratch: ScratchDatabase,
  database: DatabaseHandle,
  at: { step: UpgradeStep },
  stopped: () => boolean,
): Promise<Failure | undefined> {
  const { dir, report, spec, to } = work;
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { dependencies: Record<string, string>; backplane?: unknown };
  pkg.dependencies.backplane = spec;
  // An application made before its package.json declared the entry: npx backplane there ran Backplane alone (ADR 0132).
  if (pkg.backplane === undefined && existsSync(join(dir, 'src', 'main.ts'))) {
    pkg.backplane = { entry: 'src/main.ts', builtEntry: 'dist/main.js' };
  }
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);

  at.step = 'install';
  progress(`npm install (backplane ${spec})`);
  const install = await runner.npm(['install', '--no-audit', '--no-fund'], process.env);
  report.steps.install = install.ok;
  if (!install.ok || stopped()) {
    return { step: 'install', reason: firstReason('install', install.output, `npm install ${install.exit}`) };
  }
  const installedPkg = join(dir, 'node_modules', 'backplane', 'package.json');
  const installed = existsSync(installedPkg)
    ? normalizeVersion(String((JSON.parse(readFileSync(installedPkg, 'utf8')) as { version?: unknown }).version))
    : undefined;
  if (installed !== to) {
    report.steps.install = false;
    return { step: 'install', reason: `${spec} installed backplane ${installed ?? 'of no release'}, not ${to}: pass --package with ${to}` };
  }

  // The application's own CLI from here on: the new release composed with its modules. Loading it
  // first tells a name the release no longer exports from a migration that fails.
  at.step = 'load';
  progress('loading the application on the new release');
  const load = await runner.npm(['run', '--silent', 'backplane', '--', '--help'], process.env);
  report.steps.load = load.ok;
  if (!load.ok || stopped()) {
    return { step: 'load', reason: firstReason('load', load.output, `npm run backplane -- --help ${load.exit}`) };
  }

  at.step = 'migrations';
  progress(`applying the migrations to the throw-away database (${scratch.copy ? 'a copy of yours' : `an empty one: ${scratch.why}`})`);
  const clash = await migrationClash({ dir: join(dir, 'node_modules', 'backplane', 'migrations'), version: to }, work.migrationFolders, () =>
    appliedMigrationsAt(database.directUrl),
  );
  if (clash) {
    report.steps.migrate = false;
    return { step: 'migrations', reason: clash };
  }
  const migrate = await runner.npm(['run', '--silent', 'backplane', '--', 'migrate', 'up'], scratchEnv(scratch.url));
  report.steps.migrate = migrate.ok;
  if (!migrate.ok || stopped()) {
    return { step: 'migrations', reason: firstReason('migrations', migrate.output, `migrate up ${migrate.exit}`) };
  }

  at.step = 'tests';
  progress("running the application's tests (npm test)");
  // The tests make a throw-away database of their own, never the developer's.
  const testEnv = { ...process.env };
  delete testEnv.DATABASE_URL;
  delete testEnv.DATABASE_URL_FILE;
  const tests = await runner.npm(['test'], testEnv);
  report.steps.tests = tests.ok;
  if (!tests.ok || stopped()) {
    return { step: 'tests', reason: firstReason('tests', tests.output, `npm test ${tests.exit}`) };
  }

  at.step = 'doctor';
  progress('running doctor on the migrated throw-away database');
  const doctor = await runner.npm(['run', '--silent', 'backplane', '--', 'doctor', '--json'], scratchEnv(scratch.url));
  try {
    report.steps.doctor = JSON.parse(doctor.stdout) as { ok: boolean; checks: CheckResult[] };
  } catch {
    report.steps.doctor = {
      ok: false,
      checks: [{ check: 'doctor', status: 'fail', message: `doctor did not answer (${firstReason('load', doctor.output, doctor.exit)})` }],
    };
  }
  const failed = report.steps.doctor.checks.find((check) => check.status === 'fail');
  if (!report.steps.doctor.ok || stopped()) {
    return { step: 'doctor', reason: failed ? `${failed.check}: ${failed.message}` : `doctor ${doctor.exit}` };
  }
  return undefined;
}

/** Writes the lock and commits package.json, the lock files and backplane.lock on the branch; undone by the caller's restore when git refuses. */
function commit(work: UpgradeWork): Failure | undefined {
  const { dir, report, from, to, spec, branch } = work;
  report.lock = applicationLock({ release: to, migration: newestMigration(join(dir, 'node_modules', 'backplane', 'migrations')), spec, previous: from });
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify(report.lock, null, 2)}\n`);
  const name = git(dir, ['rev-parse', '--abbrev-ref', 'HEAD']);
  const start = name === 'HEAD' ? git(dir, ['rev-parse', 'HEAD']) : name;
  git(dir, ['checkout', '-q', '-b', branch]);
  try {
    git(dir, ['add', '--', 'package.json', ...['package-lock.json', 'npm-shrinkwrap.json'].filter((name) => existsSync(join(dir, name))), LOCK_FILE]);
    git(dir, [
      'commit',
      '-q',
      '-m',
      `Upgrade backplane ${from} → ${to}\n\nbackplane ${spec}; the application loads, the migrations apply to a copy of the database, npm test and doctor pass. Written by backplane upgrade.`,
    ]);
  } catch (error) {
    // The branch still points where it started: back to the start with the changes, then the branch goes.
    git(dir, ['reset', '-q']);
    git(dir, ['checkout', '-q', start]);
    git(dir, ['branch', '-q', '-D', branch]);
    return { step: 'commit', reason: `git refused the commit (${oneLine(error)})` };
  }
  report.commit = git(dir, ['rev-parse', 'HEAD']);
  report.committed = true;
  return undefined;
}
