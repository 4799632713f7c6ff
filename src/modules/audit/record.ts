import type { AuditEvent } from '../../platform/audit.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { normaliseAddress } from '../../platform/addresses.ts';
import { prepareMetadata } from './redaction.ts';
import { insertAuditEvent } from './store.ts';

export const ACTOR_KINDS = ['account', 'service', 'system', 'anonymous'] as const;
export const OUTCOMES = ['success', 'failure', 'denied'] as const;
export const ACTION_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** The actor of changes made by `backplane` commands. */
export const CLI_ACTOR = { kind: 'system', id: 'cli', label: 'system:cli' } as const;

/** An audit event as any module describes it (the platform's audit port). */
export type AuditEventInput = AuditEvent;

function text(value: string | undefined, max: number): string {
  return [...(value ?? '').replace(/\u0000/g, '')].slice(0, max).join('');
}

const inet = (address: string | undefined): string | null => normaliseAddress(address ?? '') ?? null;

/**
 * Records one audit event with the caller's query runner: pass the transaction of the change so
 * both commit or neither does. A malformed action, outcome or actor kind is a programming error.
 */
export async function recordAuditEvent(db: Queryable, event: AuditEventInput): Promise<string> {
  if (!ACTION_PATTERN.test(event.action) || event.action.length > 200) {
    throw new Error(`audit action ${JSON.stringify(event.action)} is not dotted lowercase segments`);
  }
  if (!(OUTCOMES as readonly string[]).includes(event.outcome)) {
    throw new Error(`audit outcome ${JSON.stringify(event.outcome)} is unknown`);
  }
  if (!(ACTOR_KINDS as readonly string[]).includes(event.actor.kind)) {
    throw new Error(`audit actor kind ${JSON.stringify(event.actor.kind)} is unknown`);
  }
  return insertAuditEvent(db, {
    occurredAt: event.occurredAt ?? null,
    actorKind: event.actor.kind,
    actorId: text(event.actor.id, 200),
    actorLabel: text(event.actor.label, 200),
    action: event.action,
    resourceType: text(event.resource?.type, 200),
    resourceId: text(event.resource?.id, 200),
    outcome: event.outcome,
    requestId: text(event.requestId, 128),
    clientIp: inet(event.clientAddress),
    userAgent: text(event.userAgent, 512),
    metadata: prepareMetadata(event.metadata),
  });
}
