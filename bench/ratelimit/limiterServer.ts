// Backplane's limiter alone on bare Koa: the same per-address decision as the service (its
// limiter, its decision pool, the same trusted-proxy resolution) and the answers the baseline
// gives, with none of the service's platform around it. Set beside the service, it tells how much
// of a decision's cost is the limiter's and how much the platform's.
import Koa from 'koa';
import pino from 'pino';
import { RATE_LIMIT_CONNECTIONS, openRateLimitPool } from '../../src/modules/ratelimit/index.ts';
import { addressKey, createRateLimiter, retryAfterSeconds } from '../../src/modules/ratelimit/index.ts';
import { createClientAddressResolver, parseTrustedProxies } from '../../src/platform/http/clientAddress.ts';
import { runClustered } from './clustered.ts';

await runClustered(async () => {
  const limiter = createRateLimiter({
    db: openRateLimitPool(process.env.DATABASE_URL!, 'bench-limiter-alone'),
    maxInFlight: RATE_LIMIT_CONNECTIONS,
    limits: { auth_ip: () => ({ limit: 60, periodSeconds: 60 }) },
    // No heartbeat here: the workers of this one server are the cluster.
    liveInstances: () => Number(process.env.BENCH_WORKERS ?? '4'),
    logger: pino({ level: 'silent' }),
  });
  await limiter.warm();
  const proxies = createClientAddressResolver(parseTrustedProxies(process.env.APP_TRUSTED_PROXIES ?? ''));
  const app = new Koa();
  app.use(async (ctx) => {
    const client = proxies.resolve(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for']);
    const decision = await limiter.take('auth_ip', addressKey(client));
    ctx.type = 'application/problem+json';
    if (!decision.allowed) {
      ctx.status = 429;
      ctx.set('Retry-After', String(retryAfterSeconds(decision)));
      ctx.body = { title: 'Too Many Requests', status: 429, code: 'rate_limited' };
      return;
    }
    ctx.status = 404;
    ctx.body = { title: 'Not Found', status: 404, code: 'not_found', detail: `No route matches ${ctx.method} ${ctx.path}.` };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
});
