// The baseline: Koa + rate-limiter-flexible's RateLimiterPostgres on the same database, with the
// same per-address limit (60 a minute), the same trusted-proxy resolution and the same answers
// (404 past the limiter, 429 with Retry-After over it), on the same number of clustered workers.
// For outages it is set up as the library's documentation recommends: an insuranceLimiter (a
// RateLimiterMemory holding the limit divided by the workers) answers when the store fails, and
// RLWrapperTimeouts turns a store that hangs into a failure after the same 2 s bound as ours.
import Koa from 'koa';
import pg from 'pg';
import { RLWrapperTimeouts, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { runClustered } from './clustered.ts';
import { addressNetwork, createClientAddressResolver, parseTrustedProxies } from '../../src/platform/http/clientAddress.ts';

await runClustered(async () => {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  // A pool error (a connection lost while paused) must not end the worker; the limiter sees the query fail.
  pool.on('error', () => undefined);
  const workers = Number(process.env.BENCH_WORKERS ?? '4');
  const insuranceLimiter = new RateLimiterMemory({ keyPrefix: 'auth_ip', points: Math.max(1, Math.floor(60 / workers)), duration: 60 });
  const store = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: pool, tableName: 'rlflx_bench', keyPrefix: 'auth_ip', points: 60, duration: 60, insuranceLimiter },
      (error?: Error) => (error && !/already exists|duplicate key/.test(error.message) ? reject(error) : resolve(created)),
    );
  });
  const limiter = new RLWrapperTimeouts({ limiter: store, timeoutMs: 2_000 });
  const proxies = createClientAddressResolver(parseTrustedProxies(process.env.APP_TRUSTED_PROXIES ?? ''));
  const app = new Koa();
  app.use(async (ctx) => {
    const client = proxies.resolve(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for']);
    try {
      await limiter.consume(addressNetwork(client));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        throw rejection;
      }
      ctx.status = 429;
      ctx.set('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
      ctx.type = 'application/problem+json';
      ctx.body = { title: 'Too Many Requests', status: 429, code: 'rate_limited' };
      return;
    }
    ctx.status = 404;
    ctx.type = 'application/problem+json';
    ctx.body = { title: 'Not Found', status: 404, code: 'not_found', detail: `No route matches ${ctx.method} ${ctx.path}.` };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
});
