import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../platform/packageRoot.ts';

export interface BuildInfo {
  version: string;
  commit: string | undefined;
  buildTime: string | undefined;
  modified: boolean;
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: packageRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** What `npm run build` recorded from git; from source (tests, tsx) git is asked at start instead. */
export function gitBuildInfo(): Omit<BuildInfo, 'version'> {
  const commit = git(['rev-parse', 'HEAD']);
  return {
    commit,
    buildTime: new Date().toISOString(),
    modified: commit !== undefined && (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
  };
}

export function loadBuildInfo(): BuildInfo {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const recorded = join(packageRoot, 'dist', 'build-info.json');
  const fromGit =
    import.meta.url.includes('/dist/') && existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as Omit<BuildInfo, 'version'>) : gitBuildInfo();
  return { version: pkg.version, ...fromGit };
}
