import type { Queryable } from './db/pool.ts';

/** One audit event as any module describes it; the audit module validates and stores it. */
export interface AuditEvent {
  /** Defaults to the database's now(). */
  occurredAt?: Date;
  actor: { kind: 'account' | 'service' | 'system' | 'anonymous'; id?: string | undefined; label?: string | undefined };
  /** Dotted lowercase segments, at least two: `settings.value.changed`. */
  action: string;
  resource?: { type: string; id: string };
  outcome: 'success' | 'failure' | 'denied';
  requestId?: string | undefined;
  /** The resolved client (after trusted proxies); anything that is not an IP is stored as null. */
  clientAddress?: string | undefined;
  userAgent?: string | undefined;
  metadata?: Record<string, unknown>;
}

/**
 * The audit trail as every module writes to it: pass the transaction of the change, so the change
 * and its event commit together or not at all.
 */
export type RecordAudit = (tx: Queryable, event: AuditEvent) => Promise<void>;
