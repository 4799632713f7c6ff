import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { UpgradeRefused, oneLine } from './upgradeRepository.ts';
import { normalizeVersion } from './upgradeVersions.ts';

export const LOCK_FILE = 'backplane.lock';
export const LOCK_FORMAT = 2;

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

// Only format and release are read; the rest, when present, must have the type upgrade writes.
const LockSchema = z.object({
  format: z.literal(LOCK_FORMAT),
  release: z.string().max(100),
  migration: z.number().int().nonnegative().optional(),
  image: z.string().optional(),
  overlay: z.string().optional(),
  previous_release: z.string().optional(),
  upgraded_at: z.string().optional(),
});

const refuse = (path: string, why: string) =>
  new UpgradeRefused(`${path} ${why}: fix it from the repository's history, or move it away and pass --from vX.Y, the release this deployment runs`);

/**
 * The lock at path (already checked to be a regular file inside the repository), validated: a
 * JSON object of format 2 whose release is a release name; undefined when there is none.
 */
export function readLock(path: string): { release: string } | undefined {
  if (!existsSync(path)) {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw refuse(path, `is not JSON (${oneLine(error)})`);
  }
  const lock = LockSchema.safeParse(parsed);
  if (!lock.success) {
    throw refuse(path, `is not a format ${LOCK_FORMAT} lock file`);
  }
  const release = normalizeVersion(lock.data.release);
  if (!release) {
    throw refuse(path, `names release ${JSON.stringify(lock.data.release)}, not a release name such as v0.5`);
  }
  return { release };
}
