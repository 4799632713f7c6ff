import { LOCK_FORMAT } from './upgradeLock.ts';

/**
 * backplane.lock format 2 in an application (ADR 0122): the release it runs and where its
 * dependency comes from, so `upgrade` needs no --from. Written by `new`, rewritten by `upgrade`.
 */
export interface ApplicationLock {
  format: typeof LOCK_FORMAT;
  release: string;
  /** The newest of Backplane's migrations the release ships. */
  migration: number;
  /** The dependency spec in package.json (^0.6.0, or file:… for a tarball). */
  package: string;
  /** The release before the last upgrade; absent on an application never upgraded. */
  previous_release?: string;
  created_at?: string;
  upgraded_at?: string;
}

export function applicationLock(fields: { release: string; migration: number; spec: string; previous?: string }): ApplicationLock {
  const now = new Date().toISOString();
  return fields.previous === undefined
    ? { format: LOCK_FORMAT, release: fields.release, migration: fields.migration, package: fields.spec, created_at: now }
    : { format: LOCK_FORMAT, release: fields.release, migration: fields.migration, package: fields.spec, previous_release: fields.previous, upgraded_at: now };
}
