// bench/system/profile.ts: where a request's CPU goes. Runs `backplane serve` (dist/, 1 instance)
// under `node --cpu-prof`, loads GET /readyz, the guarded GET /ops/system and POST /auth/bench (the
// per-address limit decided by the pod's primary, then 404) one after the other, and prints each
// layer's share of the instance's samples (self time by file). BENCH_SECONDS=5 per route;
// BENCH_ROOT=<a built checkout> profiles another build (the base of a change) on the same database;
// BENCH_ROUTES=readyz,system,auth,flood picks the routes, BENCH_BY=function lists functions, not layers;
// BENCH_BARE=1 profiles the baseline instead (bareServer.ts, one worker, its route loaded as /readyz).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { TEST_ENCRYPTION_KEY } from '../../test/support/instance.ts';
import { accountWithToken } from '../../test/support/tokens.ts';
import { freePort } from '../../src/platform/db/embedded.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { cpuMsBetween, treeCpu } from '../ratelimit/cpu.ts';
import { buildService, root, startDatabase, stopChild, waitForHttp } from '../support/harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '5');
const serviceRoot = process.env.BENCH_ROOT ?? root;
const database = await startDatabase();
if (!process.env.BENCH_ROOT) {
  buildService();
}
const pool = createPool({ connectionString: database.url, max: 2, applicationName: 'bench' });
const { token } = await accountWithToken(pool, { roles: ['ops_viewer'], ttlSeconds: 3600 });
await pool.end();

const dir = mkdtempSync(join(tmpdir(), 'backplane-profile-'));
const port = await freePort();
const bare = process.env.BENCH_BARE === '1';
const command = bare ? ['--import', 'tsx', join(root, 'bench', 'system', 'bareServer.ts')] : [join(serviceRoot, 'dist', 'cli.js'), 'serve'];
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...command], {
  cwd: serviceRoot,
  env: {
    ...process.env,
    DATABASE_URL: database.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    APP_INSTANCES: '1',
    APP_METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    APP_TRUSTED_PROXIES: '127.0.0.1/32',
    BENCH_WORKERS: '1',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const url = `http://127.0.0.1:${port}`;
let client = 0;
let total = 0;
// The load's window on the monotonic clock the profiles use (µs): start-up and shut-down are left out.
let window = [0, 0];
// The service's processes' CPU over the load (schedstat): the profile's sample times are wall time, which a loaded machine stretches.
let cpuMs = 0;
try {
  const readyz = bare ? '/' : '/readyz';
  await waitForHttp(`${url}${readyz}`, child, 60_000);
  const run = async (path: string, method: 'GET' | 'POST', headers: Record<string, string> = {}, oneClient = false) => {
    const result = await autocannon({
      url: `${url}${path}`,
      method,
      headers,
      connections: 50,
      duration: seconds,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, 'x-forwarded-for': oneClient ? '10.8.0.1' : `10.9.${(client >> 8) & 255}.${client++ & 255}` },
          }),
        },
      ],
    });
    console.log(`${method} ${path}: ${Math.round(result.requests.average)} req/s, ${result.requests.total} requests`);
    return result.requests.total;
  };
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpuBefore = treeCpu([child.pid!]);
  const routes = (process.env.BENCH_ROUTES ?? 'readyz,system,auth').split(',');
  total += routes.includes('readyz') ? await run(readyz, 'GET') : 0;
  total += routes.includes('system') ? await run('/ops/system', 'GET', { Authorization: `Bearer ${token}` }) : 0;
  total += routes.includes('auth') ? await run('/auth/bench', 'POST') : 0;
  // One client flooding: after its first minute's budget, refusals known from memory (ratelimit (a)).
  total += routes.includes('flood') ? await run('/auth/bench', 'POST', {}, true) : 0;
  window = [from, Number(process.hrtime.bigint() / 1000n)];
  cpuMs = cpuMsBetween(cpuBefore, treeCpu([child.pid!]), child.pid!);
  console.log(`requests: ${total}`);
} finally {
  await stopChild(child);
  await database.stop();
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}
interface Profile {
  startTime: number;
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}
/** Each sample's node and the ms it stands for, within the load's window. */
const samplesOf = (profile: Profile) => {
  let at = profile.startTime;
  return profile.samples.flatMap((id, index) => {
    at += profile.timeDeltas[index] ?? 0;
    return at >= window[0]! && at <= window[1]! ? [{ id, ms: (profile.timeDeltas[index] ?? 0) / 1000 }] : [];
  });
};
const busyMs = (profile: Profile) => {
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  return samplesOf(profile).reduce((sum, { id, ms }) => sum + (idle.has(id) ? 0 : ms), 0);
};
// The instance is the profile that worked most (the primary mostly waits).
const profiles = readdirSync(dir).map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile);
const profile = profiles.sort((a, b) => busyMs(b) - busyMs(a))[0]!;
// BENCH_BY=function: each function's self time (file:function) instead of each layer's.
const byFunction = process.env.BENCH_BY === 'function';
const layer = (node: Node) => {
  const { url: file, functionName } = node.callFrame;
  if (byFunction) {
    return `${file.replace(/^.*\/(node_modules|dist)\//, '')}:${functionName || '(anonymous)'}`;
  }
  if (!file) {
    return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  }
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (modules) {
    return modules[1]!;
  }
  if (file.startsWith('node:')) {
    return file;
  }
  return file.replace(/^.*\/dist\//, 'dist/');
};
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMs = new Map<string, number>();
for (const { id, ms } of samplesOf(profile)) {
  const name = layer(byId.get(id)!);
  selfMs.set(name, (selfMs.get(name) ?? 0) + ms);
}
selfMs.delete('(idle)');
selfMs.delete(':(idle)');
const all = [...selfMs.values()].reduce((sum, ms) => sum + ms, 0);
console.log(
  `profile ${dir}: ${Math.round(all)} ms of samples; the service's CPU ${Math.round((cpuMs * 1000) / total)} µs per request (all three routes, primary included)`,
);
// Each layer's µs: its share of the instance's samples times the service's measured CPU per request.
const usPerRequest = (ms: number) => ((ms / all) * cpuMs * 1000) / total;
for (const [name, ms] of [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_TOP ?? '40'))) {
  console.log(`${((100 * ms) / all).toFixed(1).padStart(5)}%  ${usPerRequest(ms).toFixed(1).padStart(6)} µs  ${name}`);
}
// The same self time by layer of the request path (first pattern that matches a file wins).
const LAYERS: Array<[string, RegExp]> = [
  [
    'koa (context, respond, compose)',
    /^(koa|koa-compose|delegates|on-finished|ee-first|statuses|content-type|mime-types|type-is|accepts|negotiator|vary|cache-content-type|only|encodeurl|escape-html|http-errors|fresh|koa-is-json)$/,
  ],
  ['router (@koa/router, route dispatch, validation)', /^(@koa\/router|path-to-regexp|zod|dist\/platform\/http\/(router|route|validate|schemas)\.js)$/],
  [
    'request frame (id, metrics, access log, problems)',
    /^(pino|sonic-boom|prom-client|fast-redact|dist\/platform\/(http\/(requestFrame|requestId|accessLog|problem|errors|clientAddress)|metrics\/.*|errors)\.js)$/,
  ],
  ['middleware (static, maintenance, body)', /^(koa-body|co-body|raw-body|dist\/platform\/http\/(staticAssets|body)\.js|dist\/modules\/maintenance\/.*)$/],
  ['connection tracking', /^dist\/platform\/http\/connections\.js$/],
  ['guard (auth)', /^dist\/modules\/auth\//],
  ['limiter and the trip to the primary', /^(dist\/modules\/ratelimit\/.*|node:internal\/child_process.*|node:child_process)$/],
  ['route handlers (health)', /^dist\/modules\/health\//],
  ['promise hooks (AsyncLocalStorage)', /^node:internal\/async_hooks$/],
  [
    'node http, sockets and streams',
    /^(node:_http_.*|node:net|node:internal\/(streams|stream_base_commons).*|\(native\) (writev|writeBuffer|writeString|writeUtf8String))$/,
  ],
  ['garbage collector', /^\(garbage collector\)$/],
];
const layerMs = new Map<string, number>();
for (const [name, ms] of selfMs) {
  const found = LAYERS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other (events, microtasks, timers, background work)';
  layerMs.set(found, (layerMs.get(found) ?? 0) + ms);
}
console.log("\nby layer (share of the instance's samples; µs = share x the service's CPU per request, all three routes)");
for (const [name, ms] of [...layerMs].sort((a, b) => b[1] - a[1])) {
  console.log(`${usPerRequest(ms).toFixed(1).padStart(6)} µs  ${((100 * ms) / all).toFixed(1).padStart(5)}%  ${name}`);
}
