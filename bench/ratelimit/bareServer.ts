// The no-limiter reference: a bare Koa route giving the same 404 answer, on the same number of
// clustered workers, with no middleware at all.
import cluster from 'node:cluster';
import Koa from 'koa';

const workers = Number(process.env.BENCH_WORKERS ?? '4');
if (cluster.isPrimary) {
  for (let index = 0; index < workers; index += 1) {
    cluster.fork();
  }
  process.on('SIGTERM', () => {
    Object.values(cluster.workers ?? {}).forEach((worker) => worker?.kill());
    process.exit(0);
  });
} else {
  const app = new Koa();
  app.use((ctx) => {
    ctx.status = 404;
    ctx.type = 'application/problem+json';
    ctx.body = { title: 'Not Found', status: 404, code: 'not_found', detail: `No route matches ${ctx.method} ${ctx.path}.` };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
}
