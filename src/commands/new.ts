import { execFileSync } from 'node:child_process';
import { type Stats, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { loadBuildInfo } from '../app/buildInfo.ts';
import { listMigrationFiles } from '../platform/db/migrations.ts';
import { packageRoot } from '../platform/packageRoot.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { applicationLock } from './applicationLock.ts';
import { dependencySpec } from './dependencySpec.ts';
import { LOCK_FILE } from './upgradeLock.ts';
import { normalizeVersion } from './upgradeVersions.ts';

/** The application's files, as real files in the package (templates/app), copied with its name filled in. */
export const TEMPLATE_DIR = join(packageRoot, 'templates', 'app');
// npm drops .gitignore from a package, so dot files are stored without their dot.
const DOT_FILES = new Set(['gitignore', 'dockerignore']);
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** The package name as a DNS label (RFC 1123): the namespace, image and host name in deploy/ (@acme/orders.api → orders-api). */
export function dnsName(name: string): string {
  const label = name
    .replace(/^@[^/]*\//, '')
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
  return label || 'app';
}

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? templateFiles(join(dir, entry.name)).map((file) => join(entry.name, file)) : [entry.name],
  );
}

/**
 * A template file as the application gets it. JSON goes through a serializer, never through
 * text substitution: the dependency spec is the operator's text and must stay one JSON string.
 */
function applicationFile(file: string, text: string, words: { name: string; dnsName: string; spec: string }): string {
  if (file.endsWith('.json')) {
    const value = JSON.parse(text) as Record<string, unknown>;
    const filled = file === 'package.json' ? { name: words.name, ...value, dependencies: { backplane: words.spec, ...(value.dependencies as object) } } : value;
    return `${JSON.stringify(filled, null, 2)}\n`;
  }
  // Only names checked against PACKAGE_NAME reach other files: no quote, space or line break.
  return text.replace(/\{\{(name|dns_name)\}\}/g, (_, word: string) => (word === 'name' ? words.name : words.dnsName));
}

function gitCommit(dir: string): void {
  const git = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    execFileSync('git', args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  git(['init', '-q']);
  git(['add', '-A']);
  let named = true;
  try {
    named = git(['config', 'user.email']).trim() !== '';
  } catch {
    named = false;
  }
  // A machine with no git identity (a fresh container) still gets its first commit, by a name that says who made it.
  const env = named
    ? process.env
    : {
        ...process.env,
        GIT_AUTHOR_NAME: 'backplane new',
        GIT_AUTHOR_EMAIL: 'backplane@localhost',
        GIT_COMMITTER_NAME: 'backplane new',
        GIT_COMMITTER_EMAIL: 'backplane@localhost',
      };
  git(['commit', '-q', '-m', 'Create the application with backplane new'], env);
}

/** Why DIR cannot take the application, in one line; undefined when it is missing or an empty folder. */
function unusableFolder(dir: string): string | undefined {
  let entry: Stats;
  try {
    entry = lstatSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : `${dir} cannot be used (${code ?? (error as Error).message}): choose a new or empty folder`;
  }
  if (entry.isSymbolicLink()) {
    try {
      entry = statSync(dir);
    } catch {
      return `${dir} is a symbolic link to ${readlinkSync(dir)}, which does not exist: remove the link or choose a new or empty folder`;
    }
  }
  return entry.isDirectory() && readdirSync(dir).length === 0 ? undefined : `${dir} is not an empty folder: choose a new or empty one`;
}

/** A failed write or git step as one line: the folder may hold part of the application. */
function failureLine(error: unknown, dir: string): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  const said = typeof stderr === 'string' && stderr.trim() ? stderr.trim().split('\n')[0] : (error as Error).message.split('\n')[0];
  return `new failed in ${dir}: ${said}; remove what it wrote before trying again`;
}

/**
 * `new DIR [--name NAME] [--package SPEC] [--no-git]`: writes an application built on Backplane
 * (ADR 0122) into a folder that is missing or empty; it installs nothing (`npm install` does).
 * Every argument is checked before the first file is written.
 */
export async function newApplication(flags: Flags): Promise<number> {
  const [target] = flags.positional;
  const dir = resolve(target!);
  const unusable = unusableFolder(dir);
  if (unusable) {
    console.error(`backplane: new refused: ${unusable}`);
    return 1;
  }
  const name = flag(flags, 'name') ?? basename(dir).toLowerCase();
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    throw new UsageError(`${JSON.stringify(name)} is not an npm package name (lowercase letters, digits, ., _ and -): pass --name NAME`);
  }
  const version = loadBuildInfo().version;
  const release = normalizeVersion(version)!;
  const spec = dependencySpec(flag(flags, 'package'), version);
  const words = { name, dnsName: dnsName(name), spec };
  try {
    for (const file of templateFiles(TEMPLATE_DIR)) {
      const last = basename(file);
      const out = join(dir, dirname(file), DOT_FILES.has(last) ? `.${last}` : last);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, applicationFile(file, readFileSync(join(TEMPLATE_DIR, file), 'utf8'), words));
    }
    const lock = applicationLock({ release, migration: Math.max(0, ...listMigrationFiles().map((file) => file.version)), spec });
    writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify(lock, null, 2)}\n`);
    if (!hasFlag(flags, 'no-git')) {
      gitCommit(dir);
    }
  } catch (error) {
    console.error(`backplane: ${failureLine(error, dir)}`);
    return 1;
  }
  const shown = target!;
  console.log(`created ${name} on backplane ${release} in ${shown}${hasFlag(flags, 'no-git') ? '' : ' (git repository, first commit)'}`);
  console.log(
    `next:\n  cd ${shown}\n  npm install && npm start     # the service and its example module, on an embedded PostgreSQL\n  npm test                     # the application's tests, on a throw-away database`,
  );
  return 0;
}
