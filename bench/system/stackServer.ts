// The platform's HTTP stack alone (dist/app/http.js of BENCH_STACK_ROOT, this checkout by default):
// a /readyz-like route among 40 others, drain tracking, metrics, a silent logger and the
// deadline's AsyncLocalStorage enabled as in an instance, no database. Beside bareServer.ts it
// tells what the stack costs a request with nothing else running (bench/system/stack.ts).
import { join } from 'node:path';
import client from 'prom-client';
import pino from 'pino';
import { z } from 'zod';
import type * as Http from '../../src/app/http.ts';
import type * as Connections from '../../src/platform/http/connections.ts';
import type * as Route from '../../src/platform/http/route.ts';
import type * as Metrics from '../../src/platform/metrics/registry.ts';
import type * as Deadline from '../../src/platform/db/deadline.ts';
import type * as LogFields from '../../src/platform/tracing/logFields.ts';
import type * as Setup from '../../src/platform/tracing/setup.ts';

// The build, as the service runs it: through tsx every named closure made per request paid
// esbuild's __name (a defineProperty), which made validation look seven times its cost.
const root = process.env.BENCH_STACK_ROOT ?? join(import.meta.dirname, '..', '..');
const { createHttpServer } = (await import(join(root, 'dist/app/http.js'))) as typeof Http;
const { trackConnections } = (await import(join(root, 'dist/platform/http/connections.js'))) as typeof Connections;
const { bindRoutes, defineRoute, reply } = (await import(join(root, 'dist/platform/http/route.js'))) as typeof Route;
const { createHttpMetrics } = (await import(join(root, 'dist/platform/metrics/registry.js'))) as typeof Metrics;
const { withDatabaseDeadline } = (await import(join(root, 'dist/platform/db/deadline.js'))) as typeof Deadline;

// With OTEL_EXPORTER_OTLP_ENDPOINT set (stack.ts's BENCH_TRACING rows), as an instance starts:
// the SDK registered before the request frame is built, and the logger's trace options (its mixin).
// (Only this checkout's stack is traced: stack.ts runs BENCH_STACK_ROOT's untraced.)
let traceLogOptions: Partial<typeof LogFields.traceLogOptions> = {};
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  const { startTracing } = (await import(join(root, 'dist/platform/tracing/setup.js'))) as typeof Setup;
  traceLogOptions = ((await import(join(root, 'dist/platform/tracing/logFields.js'))) as typeof LogFields).traceLogOptions;
  await startTracing({ role: 'instance', instanceId: 'bench' });
}

// As in an instance: the readiness probe's deadline has enabled the AsyncLocalStorage.
await withDatabaseDeadline(1_000, async () => undefined);
const others = Array.from({ length: 40 }, (_v, index) =>
  defineRoute({
    method: 'GET',
    path: `/ops/thing${index}/{id}`,
    tag: 't',
    summary: 's',
    params: z.object({ id: z.string() }),
    responses: { 200: null },
    handler: () => ({}),
  }),
);
const readyz = defineRoute({
  method: 'GET',
  path: '/readyz',
  needsDatabase: false,
  tag: 'health',
  summary: 'readiness',
  query: z.object({ verbose: z.string().optional() }),
  responses: { 200: null },
  handler: async () => reply({ status: 'ok' }, { headers: { 'Cache-Control': 'no-store' } }),
});
const server = createHttpServer({
  logger: pino({ level: 'info', ...traceLogOptions }, pino.destination('/dev/null')),
  routes: bindRoutes([...others, readyz], undefined),
  guard: { authenticate: async () => ({ kind: 'account', id: 'a', label: 'a', methods: [] }) as never, authorize: () => undefined },
  statuses: [],
  metrics: createHttpMetrics(new client.Registry()),
  bodyLimitBytes: 1_048_576,
  keepAliveTimeoutMs: 65_000,
  answerEarly: () => undefined,
  beforeBody: [(_ctx, next) => next(), async (_ctx, next) => next()],
});
trackConnections(server);
server.listen(Number(process.env.PORT), '127.0.0.1');
