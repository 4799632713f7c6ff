import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../../src/platform/db/embedded.ts';
import { waitFor } from './cluster.ts';

/** Debian's prometheus (scripts/install-prometheus.mjs installs it, looking in the same place), or undefined. */
export const prometheusPath: string | undefined = existsSync('/usr/bin/prometheus') ? '/usr/bin/prometheus' : undefined;

export const SKIP_REASON = 'no Prometheus server: run `node scripts/install-prometheus.mjs` as root (apt-get install prometheus)';

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

export interface TestPrometheus {
  url: string;
  /** Pending and firing alerts, from /api/v1/alerts. */
  alerts(): Promise<ActiveAlert[]>;
  /** An instant query's samples: labels and value. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/**
 * A Prometheus server of the test's own, on a free port with a throw-away database, scraping
 * `target` as job="backplane" with the labels the Kubernetes kit adds, and evaluating `rules`.
 */
export async function startPrometheus(options: {
  target: string;
  rules: unknown;
  scrapeSeconds: number;
  labels: Record<string, string>;
}): Promise<TestPrometheus> {
  const folder = mkdtempSync(join(tmpdir(), 'backplane-prometheus-'));
  writeFileSync(join(folder, 'rules.yaml'), stringify(options.rules, { lineWidth: 0 }));
  writeFileSync(
    join(folder, 'prometheus.yaml'),
    stringify({
      global: { scrape_interval: `${options.scrapeSeconds}s`, scrape_timeout: `${options.scrapeSeconds}s`, evaluation_interval: '1s' },
      rule_files: [join(folder, 'rules.yaml')],
      scrape_configs: [{ job_name: 'backplane', static_configs: [{ targets: [options.target], labels: options.labels }] }],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    prometheusPath!,
    [
      `--config.file=${join(folder, 'prometheus.yaml')}`,
      `--storage.tsdb.path=${join(folder, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const api = async <T>(path: string): Promise<T> => {
    const body = (await (await fetch(`${url}${path}`)).json()) as { status: string; data: T };
    if (body.status !== 'success') {
      throw new Error(`Prometheus answered ${JSON.stringify(body)}`);
    }
    return body.data;
  };
  try {
    await waitFor(async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined), 30_000, 'Prometheus to be ready');
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output.slice(-2000)}`);
  }
  return {
    url,
    alerts: async () => (await api<{ alerts: ActiveAlert[] }>('/api/v1/alerts')).alerts,
    query: async (expr) =>
      (await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      process.removeListener('exit', killOnExit);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
