import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { listMigrationFiles } from '../platform/db/migrations.ts';
import { packageRoot } from '../platform/packageRoot.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { applicationLock } from './applicationLock.ts';
import { LOCK_FILE } from './upgradeLock.ts';
import { normalizeVersion } from './upgradeVersions.ts';

/** The application's files, as real files in the package (templates/app), copied with three words filled in. */
export const TEMPLATE_DIR = join(packageRoot, 'templates', 'app');
// npm drops .gitignore from a package, so dot files are stored without their dot.
const DOT_FILES = new Set(['gitignore', 'dockerignore']);
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** Where the application gets Backplane: a tarball or folder on disk becomes file:<absolute path>; anything else is an npm spec. */
export function dependencySpec(spec: string | undefined, version: string): string {
  if (spec === undefined) {
    return `^${version}`;
  }
  const path = resolve(spec);
  return /^[./~]/.test(spec) || existsSync(path) ? `file:${path}` : spec;
}

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? templateFiles(join(dir, entry.name)).map((file) => join(entry.name, file)) : [entry.name],
  );
}

function gitCommit(dir: string): void {
  const git = (args: string[], env: NodeJS.ProcessEnv = process.env) => execFileSync('git', args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  git(['init', '-q']);
  git(['add', '-A']);
  let named = true;
  try {
    named = git(['config', 'user.email']).trim() !== '';
  } catch {
    named = false;
  }
  // A machine with no git identity (a fresh container) still gets its first commit, by a name that says who made it.
  const env = named ? process.env : { ...process.env, GIT_AUTHOR_NAME: 'backplane new', GIT_AUTHOR_EMAIL: 'backplane@localhost', GIT_COMMITTER_NAME: 'backplane new', GIT_COMMITTER_EMAIL: 'backplane@localhost' };
  git(['commit', '-q', '-m', 'Create the application with backplane new'], env);
}

/**
 * `new DIR [--name NAME] [--package SPEC] [--no-git]`: writes an application built on Backplane
 * (ADR 0122) into a folder that is missing or empty; it installs nothing (`npm install` does).
 */
export async function newApplication(flags: Flags): Promise<number> {
  const [target] = flags.positional;
  const dir = resolve(target!);
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    console.error(`backplane: new refused: ${dir} is not an empty folder: choose a new or empty one`);
    return 1;
  }
  const name = flag(flags, 'name') ?? basename(dir).toLowerCase();
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    throw new UsageError(`${JSON.stringify(name)} is not an npm package name (lowercase letters, digits, ., _ and -): pass --name NAME`);
  }
  const version = loadBuildInfo().version;
  const release = normalizeVersion(version)!;
  const spec = dependencySpec(flag(flags, 'package'), version);
  const words: Record<string, string> = { name, backplane: spec, release };
  for (const file of templateFiles(TEMPLATE_DIR)) {
    const last = basename(file);
    const out = join(dir, dirname(file), DOT_FILES.has(last) ? `.${last}` : last);
    mkdirSync(dirname(out), { recursive: true });
    const text = readFileSync(join(TEMPLATE_DIR, file), 'utf8').replace(/\{\{(name|backplane|release)\}\}/g, (_, word: string) => words[word]!);
    writeFileSync(out, text);
  }
  const lock = applicationLock({ release, migration: Math.max(0, ...listMigrationFiles().map((file) => file.version)), spec });
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify(lock, null, 2)}\n`);
  if (!hasFlag(flags, 'no-git')) {
    gitCommit(dir);
  }
  const shown = target!;
  console.log(`created ${name} on backplane ${release} in ${shown}${hasFlag(flags, 'no-git') ? '' : ' (git repository, first commit)'}`);
  console.log(`next:\n  cd ${shown}\n  npm install && npm start     # the service and its example module, on an embedded PostgreSQL\n  npm test                     # the application's tests, on a throw-away database`);
  return 0;
}
