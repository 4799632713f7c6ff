import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import { followTable } from '../../platform/db/followTable.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import { grants } from './permissions.ts';
import { loadAccountGrants, loadGrants } from './store/roles.ts';
import { withTimeout } from '../../platform/time.ts';

export const PERMISSIONS_CHANNEL = 'backplane_permissions';
const FULL_RELOAD_MS = 5 * 60_000;
const CONFIRM_INTERVAL_MS = 250;
const CONFIRM_TIMEOUT_MS = 2_000;

export interface GrantsCache {
  has(accountId: string, permission: string): boolean;
  /**
   * Like has(), but a denial is confirmed against the database (at most every 250 ms per
   * account), so a grant applies to the very next request even before its NOTIFY arrives.
   */
  confirm(accountId: string, permission: string): Promise<boolean>;
  reload(): Promise<void>;
  close(): void;
}

/**
 * Every account's role grants in memory: reloaded on NOTIFY from the roles triggers, on
 * reconnect and every 5 minutes. A failed reload keeps the last known grants.
 */
export function createGrantsCache(db: Queryable, listener: NotificationListener, logger: Logger): GrantsCache {
  let byAccount = new Map<string, string[]>();
  const lastConfirmed = new Map<string, number>();

  const follower = followTable({
    listener,
    channel: PERMISSIONS_CHANNEL,
    resyncMs: FULL_RELOAD_MS,
    load: async () => {
      byAccount = await loadGrants(db);
    },
    logger,
    what: 'permission grants',
  });

  const has = (accountId: string, permission: string) => (byAccount.get(accountId) ?? []).some((entry) => grants(entry, permission));

  return {
    has,
    async confirm(accountId, permission) {
      if (has(accountId, permission)) {
        return true;
      }
      const now = Date.now();
      if (now - (lastConfirmed.get(accountId) ?? 0) < CONFIRM_INTERVAL_MS) {
        return false;
      }
      lastConfirmed.set(accountId, now);
      if (lastConfirmed.size > 10_000) {
        lastConfirmed.clear();
      }
      try {
        const entries = await withTimeout(loadAccountGrants(db, accountId), CONFIRM_TIMEOUT_MS);
        byAccount = new Map(byAccount).set(accountId, entries);
        return has(accountId, permission);
      } catch (error) {
        logger.warn({ err: error }, 'a denial could not be confirmed; the cached grants decide');
        return false;
      }
    },
    reload: follower.reload,
    close: follower.stop,
  };
}
