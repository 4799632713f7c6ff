import { z } from 'zod';
import { changedBy } from '../../platform/caller.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import { timestamp } from '../../platform/http/schemas.ts';
import { LIMITER_NAMES } from './limiters.ts';
import type { RateLimitOps } from './opsService.ts';

const Subject = z.strictObject({
  email: z
    .string()
    .max(320)
    .optional()
    .meta({ examples: ['ada@example.com'] })
    .describe('As a person types it at sign-in'),
  address: z
    .string()
    .max(100)
    .optional()
    .meta({ examples: ['203.0.113.9'] })
    .describe('A client IP address; IPv6 counts by its /64'),
});

const LimiterState = z.object({
  limiter: z.enum(LIMITER_NAMES),
  covers: z.enum(['email', 'address', 'email_and_address', 'account']).describe("What of the subject the limiter's key is made of"),
  limit: z.number().int(),
  period_seconds: z.number(),
  remaining: z.number().int().describe('Requests it would admit right now'),
  blocked: z.boolean(),
  blocked_until: timestamp().nullable().describe('When it admits one request again; null when not blocked'),
  full_at: timestamp().nullable().describe('When the whole budget is back; null when it is'),
});

const Lookup = z.object({ limiters: z.array(LimiterState) });

const Clear = z.object({
  cleared: z.array(z.enum(LIMITER_NAMES)).describe('Limiters that held a bucket for the subject (the others were already full)'),
  limiters: z.array(LimiterState).describe('The same limiters after clearing'),
});

const defineRoute = routeDefiner<RateLimitOps>();

const SUBJECT_TEXT =
  'Name `email`, `address` or both (400 `ratelimit_subject_invalid` when neither, or when one is malformed). ' +
  "The service computes each limiter's key as the sign-in path does: auth_login (email and address), auth_login_address (email), auth_ip (address).";

/** What blocks an email or an address, and clearing it (ADR 0128). */
export const rateLimitOpsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/ratelimits',
    permission: 'ops.ratelimits.read',
    tag: 'ops',
    summary: 'The limits that cover an email or a client address: what is left, whether blocked and until when',
    description: `${SUBJECT_TEXT} Keys stay hashed in the database; reading them is not audited.`,
    query: Subject,
    responses: { 200: Lookup },
    problems: ['ratelimit_subject_invalid'],
    handler: ({ query, deps }) => deps.lookup(query),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/ops/ratelimits',
    permission: 'ops.ratelimits.write',
    tag: 'ops',
    summary: 'Clear the limits that cover an email or a client address, with a reason',
    description:
      `${SUBJECT_TEXT} Deletes those buckets and makes every instance forget what it holds of them in memory (known blocks, its own buckets) within a second. ` +
      'Audited as `ratelimit.buckets.cleared`.',
    query: Subject,
    body: z.strictObject({ reason: z.string().max(500).optional().describe('Why; required') }),
    responses: { 200: Clear },
    problems: ['ratelimit_subject_invalid', 'ratelimit_reason_required'],
    handler: ({ query, body, caller, deps }) => deps.clear(query, body.reason, changedBy(caller)),
  }),
];
