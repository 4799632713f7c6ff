import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming X-Request-Id, otherwise makes one; echoes it on the response. */
export async function assignRequestId(ctx: Context, next: Next): Promise<void> {
  const incoming = ctx.get('X-Request-Id');
  const requestId = ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = requestId;
  ctx.set('X-Request-Id', requestId);
  await next();
}
