import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import { grants } from './permissions.ts';
import { loadGrants } from './store/roles.ts';

export const PERMISSIONS_CHANNEL = 'backplane_permissions';
const FULL_RELOAD_MS = 5 * 60_000;

export interface GrantsCache {
  has(accountId: string, permission: string): boolean;
  reload(): Promise<void>;
  close(): void;
}

/**
 * Every account's role grants in memory: reloaded on NOTIFY from the roles triggers, on
 * reconnect and every 5 minutes. A failed reload keeps the last known grants.
 */
export function createGrantsCache(db: Queryable, listener: NotificationListener, logger: Logger): GrantsCache {
  let byAccount = new Map<string, string[]>();
  let reloading: Promise<void> | undefined;
  let again = false;

  async function reload(): Promise<void> {
    if (reloading) {
      again = true;
      return reloading;
    }
    reloading = (async () => {
      do {
        again = false;
        try {
          byAccount = await loadGrants(db);
        } catch (error) {
          logger.warn({ err: error }, 'permission grants could not be reloaded; serving the last known');
        }
      } while (again);
    })().finally(() => {
      reloading = undefined;
    });
    return reloading;
  }

  listener.listen(PERMISSIONS_CHANNEL, () => void reload());
  listener.onConnected(() => void reload());
  const timer = setInterval(() => void reload(), FULL_RELOAD_MS);
  timer.unref();

  return {
    has(accountId, permission) {
      return (byAccount.get(accountId) ?? []).some((entry) => grants(entry, permission));
    },
    reload,
    close() {
      clearInterval(timer);
    },
  };
}
