// One bounded autocannon run whose requests come from chosen clients (X-Forwarded-For through a
// trusted loopback proxy), counting per client what was admitted (any answer but 429).
import autocannon from 'autocannon';
import { cpuMsBetween, ownCpuMs, treeCpu } from './cpu.ts';

/**
 * A POST under /auth with no route: the per-address limit decides it, then the router answers 404,
 * the same answer the bare and baseline servers give, so only the decision differs between them.
 */
export const LIMITED_PATH = '/auth/bench';

export interface ScenarioResult {
  server: string;
  scenario: string;
  seconds: number;
  requests: number;
  decisionsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  admitted: number;
  refused: number;
  /** Admitted beyond what GCRA allows a client over the run (burst + elapsed / interval), summed. */
  overAdmissions: number | null;
  errors: number;
  /** CPU milliseconds per 1,000 requests: the server's processes, PostgreSQL's, and autocannon's. */
  cpuMsPer1000: { server: number; database: number; loadGenerator: number };
  /** The service's own counters over the run: decisions by source, fallbacks by reason. */
  decisions?: Record<string, number>;
}

export interface Scenario {
  server: string;
  scenario: string;
  /** Where requests go; several (pods behind a load balancer) share the connections and the rate evenly. */
  url: string | string[];
  clients: string[];
  /** POST path; a non-GET /auth path goes through the per-address limit. */
  path?: string;
  seconds: number;
  connections: number;
  /** The limit, to compute what GCRA allows; null when nothing limits (the bare route). */
  limit: { limit: number; periodSeconds: number } | null;
  /** Process-tree roots whose CPU time the run reports (every pod's, for several servers). */
  pids: { server: number | number[]; database: number };
  /** Requests per second offered over all connections; as fast as answered unless given. */
  rate?: number;
  /** Started with the load and awaited with it (pausing the database in the middle of a flood). */
  alongside?: () => Promise<void>;
}

export async function runScenario(options: Scenario): Promise<ScenarioResult> {
  const urls = Array.isArray(options.url) ? options.url : [options.url];
  if (!urls.every((url) => url.startsWith('http://127.0.0.1:'))) {
    throw new Error('benchmarks only target 127.0.0.1');
  }
  const servers = Array.isArray(options.pids.server) ? options.pids.server : [options.pids.server];
  const admitted = new Map<string, number>();
  let refused = 0;
  let next = 0;
  const cpuBefore = treeCpu([...servers, options.pids.database]);
  const ownBefore = ownCpuMs();
  const started = performance.now();
  // One load generator per target, each with its share; clients are taken in turn by all of them.
  const loads = urls.map((url) =>
    autocannon({
      url,
      connections: Math.max(1, Math.round(options.connections / urls.length)),
      duration: options.seconds,
      ...(options.rate ? { overallRate: options.rate / urls.length } : {}),
      requests: [
        {
          method: 'POST',
          path: options.path ?? LIMITED_PATH,
          setupRequest: (request, context) => {
            const client = options.clients[next % options.clients.length]!;
            next += 1;
            (context as { client?: string }).client = client;
            return { ...request, headers: { ...request.headers, 'x-forwarded-for': client } };
          },
          onResponse: (status, _body, context) => {
            const client = (context as { client?: string }).client ?? '?';
            if (status === 429) {
              refused += 1;
            } else if (status < 500) {
              admitted.set(client, (admitted.get(client) ?? 0) + 1);
            }
          },
        },
      ],
    }),
  );
  const [results] = await Promise.all([Promise.all(loads), options.alongside?.()]);
  const result = combine(results);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpuAfter = treeCpu([...servers, options.pids.database]);
  const per1000 = (ms: number) => Number(((ms * 1000) / Math.max(1, result.requests.total)).toFixed(1));
  const cpuMsPer1000 = {
    server: per1000(servers.reduce((sum, pid) => sum + cpuMsBetween(cpuBefore, cpuAfter, pid), 0)),
    database: per1000(cpuMsBetween(cpuBefore, cpuAfter, options.pids.database)),
    loadGenerator: per1000(ownCpuMs() - ownBefore),
  };
  let overAdmissions: number | null = null;
  if (options.limit) {
    const allowed = options.limit.limit + Math.floor((elapsedSeconds * options.limit.limit) / options.limit.periodSeconds);
    overAdmissions = [...admitted.values()].reduce((sum, count) => sum + Math.max(0, count - allowed), 0);
  }
  const total = [...admitted.values()].reduce((sum, count) => sum + count, 0);
  return {
    server: options.server,
    scenario: options.scenario,
    seconds: Number(elapsedSeconds.toFixed(1)),
    requests: result.requests.total,
    decisionsPerSecond: Math.round(result.requests.total / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    admitted: total,
    refused,
    overAdmissions,
    errors: result.errors + result.timeouts + (result['5xx'] ?? 0),
    cpuMsPer1000,
  };
}

/** Several runs side by side as one: totals summed, latencies those of the slowest target (an upper bound). */
function combine(results: autocannon.Result[]): autocannon.Result {
  if (results.length === 1) {
    return results[0]!;
  }
  const first = results[0]!;
  const total = (pick: (result: autocannon.Result) => number) => results.reduce((sum, result) => sum + pick(result), 0);
  return {
    ...first,
    duration: Math.max(...results.map((result) => result.duration)),
    errors: total((result) => result.errors),
    timeouts: total((result) => result.timeouts),
    '5xx': total((result) => result['5xx'] ?? 0),
    requests: { ...first.requests, total: total((result) => result.requests.total) },
    latency: {
      ...first.latency,
      p50: Math.max(...results.map((result) => result.latency.p50)),
      p99: Math.max(...results.map((result) => result.latency.p99)),
    },
  };
}
