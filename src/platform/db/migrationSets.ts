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
let moduleFolders: MigrationFolder[] = [];

const folderPath = (dir: string | URL) => resolve(dir instanceof URL ? fileURLToPath(dir) : dir);

/**
 * Adds an application's migrations folder to Backplane's: both run in one order (by version)
 * under one advisory lock, and `migrate status` lists both. Called once per process by the
 * application's composition, before anything migrates; undefined takes it away again.
 */
export function useApplicationMigrations(dir: string | URL | undefined): void {
  applicationDir = dir === undefined ? undefined : folderPath(dir);
}

/** Adds the migrations folders modules declare, each a set named after its module; replaces those added before. */
export function useModuleMigrations(folders: readonly { set: string; dir: string | URL }[]): void {
  moduleFolders = folders.map((folder) => ({ set: folder.set, dir: folderPath(folder.dir) }));
}

/** Every folder migrations come from: Backplane's, the application's, its modules'; a folder not yet made holds none. */
export function migrationFolders(): MigrationFolder[] {
  const backplane = { set: BACKPLANE_SET, dir: join(packageRoot, 'migrations') };
  const application = applicationDir === undefined ? [] : [{ set: APPLICATION_SET, dir: applicationDir }];
  return [backplane, ...[...application, ...moduleFolders].filter((folder) => existsSync(folder.dir))];
}
