// The baseline: Koa + rate-limiter-flexible's RateLimiterPostgres on the same database, with the
// same per-address limit (60 a minute), the same trusted-proxy resolution and the same answers
// (404 past the limiter, 429 with Retry-After over it), on the same number of clustered workers.
import Koa from 'koa';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { runClustered } from './clustered.ts';
import { addressNetwork, createClientAddressResolver, parseTrustedProxies } from '../../src/platform/http/clientAddress.ts';

await runClustered(async () => {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const limiter = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: pool, tableName: 'rlflx_bench', keyPrefix: 'auth_ip', points: 60, duration: 60 },
      (error?: Error) => (error && !/already exists|duplicate key/.test(error.message) ? reject(error) : resolve(created)),
    );
  });
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
