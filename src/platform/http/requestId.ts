import { randomUUID } from 'node:crypto';

const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Keeps a well-formed incoming X-Request-Id, otherwise takes the request's trace id (the sampled
 * span's, or the caller's traceparent's even sampled out: ADR 0130) or makes one.
 */
export function requestIdFor(incoming: string, traceId?: string): string {
  return ACCEPTED_ID.test(incoming) ? incoming : (traceId ?? randomUUID());
}
