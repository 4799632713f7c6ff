import { randomUUID } from 'node:crypto';

const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming X-Request-Id, otherwise makes one. */
export function requestIdFor(incoming: string): string {
  return ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
}
