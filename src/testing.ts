// `backplane/testing`: what an application's tests need, the same helpers Backplane's own suite
// uses: a throw-away PostgreSQL and databases, a running instance of the application, accounts
// with tokens, and the check of every answer against the application's OpenAPI document.
export { startTestPostgres } from './testing/postgres.ts';
export type { TestPostgres } from './testing/postgres.ts';
export { createTestDatabase } from './testing/database.ts';
export type { TestDatabase } from './testing/database.ts';
export type { InstrumentedPool, PoolStats } from './platform/db/pool.ts';
export { TEST_ENCRYPTION_KEY, startTestInstance } from './testing/instance.ts';
export type { TestInstanceOptions } from './testing/instance.ts';
export { LIMITER_NAMES } from './modules/ratelimit/index.ts';
export type { LimiterName, LimitSource, RateLimit, RateLimitSettings } from './modules/ratelimit/index.ts';
export type { DrainOptions, RunningInstance } from './app/instance.ts';
export { accountWithToken, bearer } from './testing/tokens.ts';
export type { TestAccount } from './testing/tokens.ts';
export { applicationDocument, responseChecker } from './testing/responses.ts';
export type { JsonObject, Operation, ReceivedResponse, ResponseChecker } from './testing/responses.ts';
