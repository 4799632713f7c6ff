import { execFileSync } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync, realpathSync, rmSync, writeSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A refusal: one line on stderr, exit 1, and the deployment repository as it was. */
export class UpgradeRefused extends Error {}

export function git(dir: string, args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** What git said, in one line: its first line on stderr, else the error's first line. */
export function oneLine(error: unknown): string {
  const stderr = String((error as { stderr?: unknown }).stderr ?? '');
  const text = stderr.trim() ? stderr : String((error as Error).message ?? error);
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .find(Boolean) ?? 'unknown error'
  );
}

/** The deployment repository: dir and the work tree's top, both with symlinks resolved. */
export function openRepository(dir: string): { dir: string; root: string } {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw new UpgradeRefused(`${dir} does not exist: run upgrade in the deployment repository (--dir PATH)`);
  }
  try {
    return { dir: real, root: realpathSync(git(real, ['rev-parse', '--show-toplevel'])) };
  } catch {
    throw new UpgradeRefused(`${dir} is not a git repository: run upgrade in the deployment repository (--dir PATH)`);
  }
}

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The absolute path of a file upgrade reads or writes, refused when it leaves the repository or
 * passes a symbolic link (the file, or any folder between it and the top): a write must never
 * land outside. A missing file is fine; what exists must be a regular file with one link.
 */
export function fileInRepository(root: string, dir: string, path: string, what: string): string {
  const target = resolve(dir, path);
  const inside = relative(root, target);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new UpgradeRefused(`${what} ${target} is outside the repository ${root}: upgrade writes only inside it`);
  }
  const parts = inside.split(sep);
  for (let index = 0; index < parts.length; index += 1) {
    const current = join(root, ...parts.slice(0, index + 1));
    let stat;
    try {
      stat = lstatSync(current);
    } catch (error) {
      if (missing(error)) {
        return target;
      }
      throw new UpgradeRefused(`${what} ${current} cannot be read: ${oneLine(error)}`);
    }
    if (stat.isSymbolicLink()) {
      throw new UpgradeRefused(`${what} ${current} is a symbolic link: upgrade refuses to follow links it would write through; replace it with the file`);
    }
    const last = index === parts.length - 1;
    if (last ? !stat.isFile() || stat.nlink > 1 : !stat.isDirectory()) {
      throw new UpgradeRefused(`${what} ${current} is not ${last ? 'a regular file with one link' : 'a folder'}`);
    }
  }
  if (relative(root, realpathSync(target)) !== inside) {
    throw new UpgradeRefused(`${what} ${target} resolves outside the repository ${root}`);
  }
  return target;
}

/** Writes a file without following a link at its last step, even one made since the check. */
function writeNoFollow(path: string, text: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates the branch, writes the files and commits them; on any failure puts the repository back
 * (the branch it was on, files as committed, no new branch) and refuses. Returns the commit.
 */
export function commitOnBranch(dir: string, branch: string, files: Array<{ path: string; text: string; existed: boolean }>, message: string): string {
  let start: string;
  try {
    start = git(dir, ['symbolic-ref', '-q', '--short', 'HEAD']);
  } catch {
    start = git(dir, ['rev-parse', 'HEAD']);
  }
  git(dir, ['checkout', '-q', '-b', branch]);
  try {
    for (const file of files) {
      writeNoFollow(file.path, file.text);
    }
    git(dir, ['add', '--', ...files.map((file) => file.path)]);
    git(dir, ['commit', '-q', '-m', message]);
    return git(dir, ['rev-parse', 'HEAD']);
  } catch (error) {
    try {
      // The branch still points at the start: a hard reset drops what was written or staged.
      git(dir, ['reset', '-q', '--hard']);
      git(dir, ['checkout', '-q', start]);
      files.filter((file) => !file.existed).forEach((file) => rmSync(file.path, { force: true }));
      git(dir, ['branch', '-q', '-D', branch]);
    } catch (undo) {
      throw new UpgradeRefused(`could not commit on ${branch} (${oneLine(error)}) nor put ${dir} back (${oneLine(undo)}): check git status there`);
    }
    throw new UpgradeRefused(`could not commit on ${branch} (${oneLine(error)}); ${dir} is as it was`);
  }
}
