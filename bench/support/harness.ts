// Shared pieces of the benchmarks: a throw-away PostgreSQL, a built service, autocannon runs.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { type EmbeddedDatabase, freePort, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { createPool } from '../../src/platform/db/pool.ts';

export const root = join(import.meta.dirname, '..', '..');

export interface BenchDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * A throw-away PostgreSQL: fsync and synchronous commit off unless `durable`, which runs it as
 * `backplane serve` does (where commits and dropped files cost what they cost in production).
 */
export async function startDatabase(options: { durable?: boolean } = {}): Promise<BenchDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backplane-bench-'));
  chmodSync(dataDir, 0o755);
  const server: EmbeddedDatabase = await openEmbeddedDatabase({ dataDir, fast: !options.durable });
  const pool = createPool({ connectionString: server.url, max: 2, applicationName: 'bench' });
  await migrateUp(pool);
  await pool.end();
  return {
    url: server.url,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Compiles src/ once so the service runs as it does in production (node dist/cli.js). */
export function buildService(): void {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
}

export interface RunningProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Polls until the URL answers below 500; fails early when the server process has exited. */
export async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`${url}: the server exited with ${child.exitCode}`);
    }
    try {
      if ((await fetch(url)).status < 500) {
        return;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `backplane serve` from dist/ (of `serviceRoot`, another built checkout if given) with N instances on a free loopback port. */
export async function startService(databaseUrl: string, instances: number, env: Record<string, string> = {}, serviceRoot = root): Promise<RunningProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(serviceRoot, 'dist', 'cli.js'), 'serve'], {
    cwd: serviceRoot,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_INSTANCES: String(instances),
      APP_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, child, 60_000);
  return { url, child, stop: () => stopChild(child) };
}

/** Any script that takes PORT from the environment (a baseline server). */
export async function startScript(script: string, env: Record<string, string>, probePath: string): Promise<RunningProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${probePath}`, child, 60_000);
  return { url, child, stop: () => stopChild(child) };
}

/** SIGTERM, then SIGKILL after 15 s; resolves once the process has exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/** One bounded autocannon run against a loopback URL. */
export async function load(name: string, options: autocannon.Options): Promise<LoadResult> {
  if (!/^http:\/\/127\.0\.0\.1:/.test(String(options.url))) {
    throw new Error('benchmarks only target 127.0.0.1');
  }
  const result = await autocannon({ duration: 10, connections: 50, ...options });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function printTable(results: LoadResult[]): void {
  const rows = results.map((r) => [r.name, String(r.requestsPerSecond), r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), String(r.non2xx), String(r.errors)]);
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  console.log(line(header));
  rows.forEach((row) => console.log(line(row)));
}

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function writeResults(name: string, data: unknown): string {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  const file = join(root, 'bench', 'results', `${name}-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
  // Which Node ran it: the runtimes price a request differently (BENCH_NODE=24).
  const recorded = typeof data === 'object' && data !== null && !Array.isArray(data) ? { node: process.version, ...data } : data;
  writeFileSync(file, JSON.stringify(recorded, null, 2) + '\n');
  return file;
}
