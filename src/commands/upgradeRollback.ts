import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UpgradeRefused } from './upgradeRepository.ts';

/** Where the copy of node_modules waits while the upgrade runs; `node_modules` in .gitignore hides it from git. */
export const KEPT_DIR = '.backplane-upgrade';

/** The files an upgrade rewrites in the working tree. */
const FILES = ['package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'backplane.lock'];

/** What a failed or interrupted upgrade puts back; the command that does it by hand when putting back fails. */
export interface WorkingTreeSnapshot {
  restore(): Promise<void>;
  discard(): Promise<void>;
  /** The shell command that puts the working tree back, for a line that says how. */
  readonly byHand: string;
}

/**
 * Keeps the files the upgrade rewrites and a copy of node_modules, so that a failure puts the
 * working tree back exactly. node_modules is copied (a reflink where the filesystem can) rather
 * than reinstalled from the restored lock: a reinstall needs the old package again (a tarball may
 * be gone, the registry unreachable) and can fail itself, where moving a folder back cannot.
 */
export async function snapshotWorkingTree(dir: string): Promise<WorkingTreeSnapshot> {
  const kept = join(dir, KEPT_DIR);
  if (existsSync(kept)) {
    throw new UpgradeRefused(
      `${kept} is left from an upgrade that was killed: it holds the node_modules from before it; put it back (rm -rf node_modules && mv ${KEPT_DIR}/node_modules node_modules && rmdir ${KEPT_DIR}) or delete it, then run upgrade again`,
    );
  }
  const files = new Map(FILES.map((name) => [name, existsSync(join(dir, name)) ? readFileSync(join(dir, name)) : undefined]));
  const modules = join(dir, 'node_modules');
  const hadModules = existsSync(modules);
  if (hadModules) {
    await mkdir(kept);
    await cp(modules, join(kept, 'node_modules'), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, mode: constants.COPYFILE_FICLONE });
  }
  const byHand = `git checkout -- ${FILES.filter((name) => files.get(name)).join(' ')}${hadModules ? ` && rm -rf node_modules && mv ${KEPT_DIR}/node_modules node_modules && rmdir ${KEPT_DIR}` : ''}`;
  return {
    byHand,
    async restore() {
      for (const [name, bytes] of files) {
        if (bytes === undefined) {
          rmSync(join(dir, name), { force: true });
        } else {
          writeFileSync(join(dir, name), bytes);
        }
      }
      if (hadModules) {
        // Out of the way first, so node_modules is whole again before the slow delete.
        const failed = join(kept, 'failed');
        if (existsSync(modules)) {
          await rename(modules, failed);
        }
        await rename(join(kept, 'node_modules'), modules);
        await rm(kept, { recursive: true, force: true });
      } else {
        await rm(modules, { recursive: true, force: true });
      }
    },
    async discard() {
      await rm(kept, { recursive: true, force: true });
    },
  };
}
