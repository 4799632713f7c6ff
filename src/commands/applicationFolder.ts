import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** An application built on Backplane: the folder of the nearest package.json that depends on backplane. */
export interface ApplicationFolder {
  root: string;
  /** package.json's backplane.entry: the file that composes the application and runs its command line (src/main.ts). */
  entry?: string | undefined;
  /** package.json's backplane.builtEntry: the same file compiled (dist/main.js), run where sources or tsx are absent (an image). */
  builtEntry?: string | undefined;
}

interface PackageJson {
  name?: unknown;
  dependencies?: Record<string, unknown>;
  backplane?: { entry?: unknown; builtEntry?: unknown };
}

const fileIn = (root: string, path: unknown) => (typeof path === 'string' && path !== '' ? resolve(root, path) : undefined);

/** The application `from` lies in, found from the nearest package.json above it; undefined when that one is not an application's. */
export function findApplication(from: string): ApplicationFolder | undefined {
  let dir = resolve(from);
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) {
      return undefined;
    }
    dir = dirname(dir);
  }
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
  if (pkg.name === 'backplane' || typeof pkg.dependencies?.backplane !== 'string') {
    return undefined;
  }
  return { root: dir, entry: fileIn(dir, pkg.backplane?.entry), builtEntry: fileIn(dir, pkg.backplane?.builtEntry) };
}

/** tsx as the application installed it, or undefined (an image prunes development dependencies). */
export function applicationTsx(root: string): string | undefined {
  try {
    return createRequire(join(root, 'package.json')).resolve('tsx');
  } catch {
    return undefined;
  }
}
