import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import type { VerifiedClaims } from './accessTokens.ts';
import { type AccessRevocation, loadLiveRevocations } from './store/accessRevocations.ts';

export const ACCESS_REVOCATIONS_CHANNEL = 'backplane_access_revocations';
const RESYNC_MS = 5 * 60_000;
const PRUNE_MS = 60_000;

export interface AccessRevocations {
  /** True when the token's session was revoked, or its account deleted, or locked at a later token epoch. */
  ended(claims: Pick<VerifiedClaims, 'accountId' | 'sessionId' | 'tokenEpoch'>): boolean;
  /** Loads every live revocation; throws when the database cannot answer (start-up must not go on blind). */
  load(): Promise<void>;
  close(): void;
}

/**
 * Revoked sessions and deleted or locked accounts in memory (ADR 0064): loaded at start, each new
 * one applied from its NOTIFY, reloaded on reconnect and every 5 minutes. Entries are only added
 * (a reload merges), and each is dropped once no token issued before it can still be valid. An
 * account's entry ends tokens by the epoch the database gave them, never by a clock (iat).
 */
export function createAccessRevocations(db: Queryable, listener: NotificationListener, logger: Logger): AccessRevocations {
  const sessions = new Map<string, number>();
  const accounts = new Map<string, { endsBelowEpoch: number; expiresAtMs: number }>();

  function add(revocation: AccessRevocation): void {
    if (revocation.sessionId) {
      sessions.set(revocation.sessionId, Math.max(sessions.get(revocation.sessionId) ?? 0, revocation.expiresAtMs));
    }
    if (revocation.accountId) {
      const known = accounts.get(revocation.accountId);
      accounts.set(revocation.accountId, {
        endsBelowEpoch: Math.max(known?.endsBelowEpoch ?? 0, revocation.tokenEpoch ?? Number.POSITIVE_INFINITY),
        expiresAtMs: Math.max(known?.expiresAtMs ?? 0, revocation.expiresAtMs),
      });
    }
  }

  function prune(): void {
    const now = Date.now();
    for (const [id, expiresAtMs] of sessions) {
      if (expiresAtMs < now) {
        sessions.delete(id);
      }
    }
    for (const [id, entry] of accounts) {
      if (entry.expiresAtMs < now) {
        accounts.delete(id);
      }
    }
  }

  async function load(): Promise<void> {
    await listener.listening();
    for (const revocation of await loadLiveRevocations(db)) {
      add(revocation);
    }
  }

  const reload = () => load().catch((error: unknown) => logger.warn({ err: error }, 'access revocations could not be reloaded; serving the last known'));

  listener.listen(ACCESS_REVOCATIONS_CHANNEL, (payload) => {
    const revocation = parseNotification(payload);
    if (revocation) {
      add(revocation);
    } else {
      logger.warn('an access revocation notification could not be read; reloading');
      void reload();
    }
  });
  listener.onConnected(() => void reload());
  const resync = setInterval(() => void reload(), RESYNC_MS);
  resync.unref();
  const pruning = setInterval(prune, PRUNE_MS);
  pruning.unref();

  return {
    ended(claims) {
      if (claims.sessionId !== undefined && sessions.has(claims.sessionId)) {
        return true;
      }
      const account = accounts.get(claims.accountId);
      return account !== undefined && claims.tokenEpoch < account.endsBelowEpoch;
    },
    load,
    close() {
      clearInterval(resync);
      clearInterval(pruning);
    },
  };
}

function parseNotification(payload: string): AccessRevocation | undefined {
  try {
    const value = JSON.parse(payload) as Record<string, unknown>;
    const text = (field: unknown) => (typeof field === 'string' ? field : null);
    const revocation = {
      sessionId: text(value.session_id),
      accountId: text(value.account_id),
      revokedAtMs: Number(value.revoked_at_ms),
      expiresAtMs: Number(value.expires_at_ms),
      tokenEpoch: value.token_epoch === null || value.token_epoch === undefined ? null : Number(value.token_epoch),
    };
    const valid =
      (revocation.sessionId ?? revocation.accountId) !== null &&
      Number.isFinite(revocation.revokedAtMs) &&
      Number.isFinite(revocation.expiresAtMs) &&
      (revocation.tokenEpoch === null || Number.isSafeInteger(revocation.tokenEpoch));
    return valid ? revocation : undefined;
  } catch {
    return undefined;
  }
}
