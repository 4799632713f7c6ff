// The baseline: a bare Koa route served by the same number of clustered workers, no middleware.
import cluster from 'node:cluster';
import Koa from 'koa';

const workers = Number(process.env.BENCH_WORKERS ?? '2');
if (cluster.isPrimary) {
  for (let i = 0; i < workers; i += 1) {
    cluster.fork();
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) {
      worker?.kill();
    }
    process.exit(0);
  });
} else {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
  // Exit rather than die on the primary's signal, so that a --cpu-prof profile is written (profile.ts).
  process.on('SIGTERM', () => process.exit(0));
}
