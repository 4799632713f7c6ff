// One bounded autocannon run whose requests come from chosen clients (X-Forwarded-For through a
// trusted loopback proxy), counting per client what was admitted (any answer but 429).
import autocannon from 'autocannon';
import { cpuMsBetween, ownCpuMs, treeTicks } from './cpu.ts';

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
  url: string;
  clients: string[];
  /** POST path; a non-GET /auth path goes through the per-address limit. */
  path?: string;
  seconds: number;
  connections: number;
  /** The limit, to compute what GCRA allows; null when nothing limits (the bare route). */
  limit: { limit: number; periodSeconds: number } | null;
  /** Process-tree roots whose CPU time the run reports. */
  pids: { server: number; database: number };
  /** Requests per second offered over all connections; as fast as answered unless given. */
  rate?: number;
  /** Started with the load and awaited with it (pausing the database in the middle of a flood). */
  alongside?: () => Promise<void>;
}

export async function runScenario(options: Scenario): Promise<ScenarioResult> {
  if (!options.url.startsWith('http://127.0.0.1:')) {
    throw new Error('benchmarks only target 127.0.0.1');
  }
  const admitted = new Map<string, number>();
  let refused = 0;
  let next = 0;
  const cpuBefore = treeTicks([options.pids.server, options.pids.database]);
  const ownBefore = ownCpuMs();
  const started = performance.now();
  const load = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.rate ? { overallRate: options.rate } : {}),
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
  });
  const [result] = await Promise.all([load, options.alongside?.()]);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpuAfter = treeTicks([options.pids.server, options.pids.database]);
  const per1000 = (ms: number) => Number(((ms * 1000) / Math.max(1, result.requests.total)).toFixed(1));
  const cpuMsPer1000 = {
    server: per1000(cpuMsBetween(cpuBefore, cpuAfter, options.pids.server)),
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
