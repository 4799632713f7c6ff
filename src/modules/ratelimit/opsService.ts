// What an operator asks of the limits during an incident: what blocks an email or an address, and clearing it (ADR 0128).
import type { Logger } from 'pino';
import type { ChangedBy } from '../../platform/caller.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import type { RecordAudit } from '../../platform/audit.ts';
import type pg from 'pg';
import { AppError } from '../../platform/errors.ts';
import { bucketDigest } from './digest.ts';
import type { RateLimitErrorCode } from './errors.ts';
import type { RateLimiter } from './limiter.ts';
import type { LimiterName, RateLimitSettings } from './limiters.ts';
import { CLEARED_CHANNEL, deleteBuckets, notifyCleared, selectBuckets } from './opsStore.ts';
import { gcraRule } from './rules.ts';

/** Who the operator names: an email, a client address, or both. */
export interface RateLimitSubject {
  email?: string | undefined;
  address?: string | undefined;
}

/** A limiter's key that covers the subject, computed the way the path that spends it does. */
export interface CoveredKey {
  limiter: LimiterName;
  key: string;
  /** account: the key is the email's account (two-factor changes are counted per account). */
  covers: 'email' | 'address' | 'email_and_address' | 'account';
}

/** The subject's keys; `{ invalid }` names the field that is not an email or an IP address. */
export type CoveredKeys = (subject: RateLimitSubject, db: Queryable) => Promise<CoveredKey[] | { invalid: 'email' | 'address' }>;

export interface RateLimitOpsNeeds {
  pool: pg.Pool;
  listener: NotificationListener;
  recordAudit: RecordAudit;
  keysOf: CoveredKeys;
}

export class RateLimitOpsError extends AppError {
  declare readonly code: RateLimitErrorCode;
}

export interface LimiterState {
  limiter: LimiterName;
  covers: CoveredKey['covers'];
  limit: number;
  period_seconds: number;
  remaining: number;
  blocked: boolean;
  /** When one more request is admitted again; null when not blocked. */
  blocked_until: string | null;
  /** When the bucket is full again; null when it is. */
  full_at: string | null;
}

const covered = async (keysOf: CoveredKeys, db: Queryable, subject: RateLimitSubject): Promise<CoveredKey[]> => {
  if (subject.email === undefined && subject.address === undefined) {
    throw new RateLimitOpsError('ratelimit_subject_invalid', 'Name an email, an address, or both.');
  }
  const keys = await keysOf(subject, db);
  if ('invalid' in keys) {
    throw new RateLimitOpsError(
      'ratelimit_subject_invalid',
      keys.invalid === 'email' ? 'The email is not a valid email address.' : 'The address is not an IP address.',
    );
  }
  return keys;
};

export function createRateLimitOps(needs: RateLimitOpsNeeds, limiter: RateLimiter<LimiterName>, limits: RateLimitSettings, logger: Logger) {
  // Every instance, this one included, forgets cleared keys as the notification arrives.
  needs.listener.listen(CLEARED_CHANNEL, (payload) => {
    try {
      const { limiter: name, keys } = JSON.parse(payload) as { limiter: LimiterName; keys: string[] };
      if (name in limits) {
        limiter.forget(
          name,
          keys.map((key) => Buffer.from(key, 'hex')),
        );
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not read a rate-limit clearing notification');
    }
  });

  const describe = async (db: Queryable, keys: CoveredKey[]): Promise<LimiterState[]> => {
    const rows = await selectBuckets(
      db,
      keys.map((key) => bucketDigest(key.limiter, key.key)),
    );
    return keys.map((key, index) => {
      const row = rows[index]!;
      const rule = gcraRule(limits[key.limiter]());
      const used = Math.max(0, Number(row.used_us ?? 0));
      const blocked = used + rule.intervalUs > rule.toleranceUs;
      const at = (us: number) => new Date(row.db_now.getTime() + Math.ceil(us / 1000)).toISOString();
      return {
        limiter: key.limiter,
        covers: key.covers,
        limit: rule.limit.limit,
        period_seconds: rule.limit.periodSeconds,
        remaining: Math.min(rule.burst, Math.max(0, Math.floor((rule.toleranceUs - used) / rule.intervalUs))),
        blocked,
        blocked_until: blocked ? at(used + rule.intervalUs - rule.toleranceUs) : null,
        full_at: used > 0 ? at(used) : null,
      };
    });
  };

  return {
    /** Each limiter covering the subject: what is left, whether it blocks and until when. */
    lookup: async (subject: RateLimitSubject) => ({ limiters: await describe(needs.pool, await covered(needs.keysOf, needs.pool, subject)) }),

    /** Empties those buckets in the database and, through the notification, in every instance's memory; audited. */
    clear: async (subject: RateLimitSubject, reasonText: string | undefined, by: ChangedBy) => {
      const keys = await covered(needs.keysOf, needs.pool, subject);
      const reason = reasonText?.trim();
      if (!reason) {
        throw new RateLimitOpsError('ratelimit_reason_required', 'A reason is required to clear rate limits.');
      }
      const cleared = await withTransaction(needs.pool, async (tx) => {
        const deleted = new Set(
          (
            await deleteBuckets(
              tx,
              keys.map((key) => bucketDigest(key.limiter, key.key)),
            )
          ).map((key) => key.toString('hex')),
        );
        for (const key of keys) {
          await notifyCleared(tx, key.limiter, [bucketDigest(key.limiter, key.key)]);
        }
        const limiters = keys.filter((key) => deleted.has(bucketDigest(key.limiter, key.key).toString('hex'))).map((key) => key.limiter);
        await needs.recordAudit(tx, {
          actor: by.actor,
          action: 'ratelimit.buckets.cleared',
          resource: { type: 'ratelimit_subject', id: [subject.email, subject.address].filter(Boolean).join(' ') },
          outcome: 'success',
          requestId: by.requestId,
          clientAddress: by.clientAddress,
          userAgent: by.userAgent,
          metadata: { email: subject.email ?? null, address: subject.address ?? null, cleared: limiters, reason },
        });
        return limiters;
      });
      // This instance does not wait for its own notification.
      for (const key of keys) {
        limiter.forget(key.limiter, [bucketDigest(key.limiter, key.key)]);
      }
      return { cleared, limiters: await describe(needs.pool, keys) };
    },
  };
}

export type RateLimitOps = ReturnType<typeof createRateLimitOps>;
