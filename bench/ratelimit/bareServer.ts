// The no-limiter reference: a bare Koa route giving the same 404 answer, on the same number of
// clustered workers, with no middleware at all.
import Koa from 'koa';
import { runClustered } from './clustered.ts';

await runClustered(() => {
  const app = new Koa();
  app.use((ctx) => {
    ctx.status = 404;
    ctx.type = 'application/problem+json';
    ctx.body = { title: 'Not Found', status: 404, code: 'not_found', detail: `No route matches ${ctx.method} ${ctx.path}.` };
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
});
