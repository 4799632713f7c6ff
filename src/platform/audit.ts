import type { Queryable } from './db/pool.ts';

/** One audit event as any module describes it; the audit module validates and stores it. */
export interface AuditEvent {
  /** Defaults to the database's now(). */
  occurredAt?: Date;
  /** Who acted: an account, a service, the system (a job, a command) or nobody signed in. */
  actor: { kind: 'account' | 'service' | 'system' | 'anonymous'; id?: string | undefined; label?: string | undefined };
  /** Dotted lowercase segments, at least two: `settings.value.changed`. */
  action: string;
  /** What was acted on. */
  resource?: { type: string; id: string };
  /** Whether the action happened, failed, or was refused. */
  outcome: 'success' | 'failure' | 'denied';
  /** The request's id, to find its log line. */
  requestId?: string | undefined;
  /** The resolved client (after trusted proxies); anything that is not an IP is stored as null. */
  clientAddress?: string | undefined;
  /** The client's User-Agent header. */
  userAgent?: string | undefined;
  /** Details of the event, stored as JSON: never secrets or personal data beyond the actor. */
  metadata?: Record<string, unknown>;
}

/**
 * The audit trail as every module writes to it: pass the transaction of the change, so the change
 * and its event commit together or not at all.
 */
export type RecordAudit = (tx: Queryable, event: AuditEvent) => Promise<void>;

/** What the audit module offers the modules that name `audit` in their needs (`context.recordAudit` is its recordAudit). */
export interface AuditApi {
  /** Records an event in the transaction of the change it describes. */
  recordAudit: RecordAudit;
}
