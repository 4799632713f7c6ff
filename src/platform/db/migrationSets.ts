import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../packageRoot.ts';

/** Backplane's own migrations, shipped in its package. */
export const BACKPLANE_SET = 'backplane';
/** An application's migrations/ folder, run with Backplane's (ADR 0122). */
export const APPLICATION_SET = 'application';

export interface MigrationFolder {
  set: string;
  dir: string;
}

let applicationDir: string | undefined;

/**
 * Adds an application's migrations folder to Backplane's: both run in one order (by version)
 * under one advisory lock, and `migrate status` lists both. Called once per process by the
 * application's composition, before anything migrates; undefined takes it away again.
 */
export function useApplicationMigrations(dir: string | URL | undefined): void {
  applicationDir = dir === undefined ? undefined : resolve(dir instanceof URL ? fileURLToPath(dir) : dir);
}

/** Every folder migrations come from, Backplane's first; an application folder not yet made holds none. */
export function migrationFolders(): MigrationFolder[] {
  const backplane = { set: BACKPLANE_SET, dir: join(packageRoot, 'migrations') };
  return applicationDir !== undefined && existsSync(applicationDir) ? [backplane, { set: APPLICATION_SET, dir: applicationDir }] : [backplane];
}
