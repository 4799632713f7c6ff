import type { ReadinessCheck } from '../../platform/readiness.ts';
import { TimeoutError, withTimeout } from '../../platform/time.ts';

export type { ReadinessCheck } from '../../platform/readiness.ts';

export interface CheckResult {
  name: string;
  status: 'ok' | 'error';
  duration_ms: number;
  error?: string;
  /** ISO 8601: since when the check has been failing, for checks that know. */
  since?: string;
  /** When this check last passed on this instance; absent until it has. */
  last_ok_at?: string;
}

export interface ReadinessReport {
  /** Every check that is not optional passed. */
  ok: boolean;
  checks: CheckResult[];
}

export interface Readiness {
  /** Result shared by concurrent callers and reused for cacheMs. */
  current(): Promise<ReadinessReport>;
  /** A fresh run, for /ops/system. */
  runFresh(): Promise<ReadinessReport>;
  startDraining(): void;
  readonly draining: boolean;
}

/** How long one readiness check may take by default; Kubernetes' readiness probe waits longer (deploy/). */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessOptions {
  timeoutMs?: number;
  cacheMs?: number;
  onFailure?: (name: string, error: unknown) => void;
}

/** Runs every check concurrently, each bounded; sorted by name so output is stable. */
export function createReadiness(checks: ReadinessCheck[], options: ReadinessOptions = {}): Readiness {
  const timeoutMs = options.timeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
  const cacheMs = options.cacheMs ?? 1_000;
  const sorted = [...checks].sort((a, b) => a.name.localeCompare(b.name));
  let inFlight: Promise<ReadinessReport> | undefined;
  let cached: { report: ReadinessReport; at: number } | undefined;
  let draining = false;
  const lastOk = new Map<string, string>();

  async function runOne(check: ReadinessCheck): Promise<CheckResult> {
    const started = performance.now();
    try {
      const observed = await withTimeout(check.run(), timeoutMs);
      const at = (observed instanceof Date ? observed : new Date()).toISOString();
      lastOk.set(check.name, at);
      return { name: check.name, status: 'ok', duration_ms: Math.round(performance.now() - started), last_ok_at: at };
    } catch (error) {
      if (!check.optional) {
        // An optional check's owner logs its own failures (e.g. each discovery retry).
        options.onFailure?.(check.name, error);
      }
      const failure = error instanceof TimeoutError ? `${check.failure} (no answer within ${timeoutMs} ms)` : check.failure;
      const since = check.since?.();
      const at = lastOk.get(check.name);
      return {
        name: check.name,
        status: 'error',
        duration_ms: Math.round(performance.now() - started),
        error: failure,
        ...(since ? { since: since.toISOString() } : {}),
        ...(at ? { last_ok_at: at } : {}),
      };
    }
  }

  async function runFresh(): Promise<ReadinessReport> {
    const results = await Promise.all(sorted.map(runOne));
    return { ok: results.every((result, index) => result.status === 'ok' || sorted[index]!.optional === true), checks: results };
  }

  return {
    async current() {
      if (cached && performance.now() - cached.at < cacheMs) {
        return cached.report;
      }
      inFlight ??= runFresh()
        .then((report) => {
          cached = { report, at: performance.now() };
          return report;
        })
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
    runFresh,
    startDraining() {
      draining = true;
    },
    get draining() {
      return draining;
    },
  };
}
