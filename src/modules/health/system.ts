import type { InstrumentedPool } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import type { Readiness, ReadinessReport } from './readiness.ts';
import type { RuntimeSampler } from './runtimeStats.ts';
import type { SystemDescription } from './schemas.ts';

export interface InstanceIdentity {
  id: string;
  version: string;
  commit: string | undefined;
  buildTime: string | undefined;
  modified: boolean;
  startedAt: Date;
}

export interface MigrationCounts {
  current: number;
  latest: number;
  pending: number;
}

export interface SystemDeps {
  instance: InstanceIdentity;
  pool: InstrumentedPool;
  readiness: Readiness;
  runtime: RuntimeSampler;
  jobs: { workers: number; queues: string[] };
  /** Reads the migration state; rejects when the database cannot answer. */
  readMigrations(): Promise<MigrationCounts>;
  /** The highest migration version this code ships, for when the database cannot answer. */
  latestMigration: number;
}

export const DATABASE_UNREACHABLE = 'the database refused the connection or did not answer within 2 seconds';
export const MIGRATIONS_UNREADABLE = 'the migration state could not be read';

interface DatabaseProbe {
  report: PromiseSettledResult<ReadinessReport>;
  migrations: PromiseSettledResult<MigrationCounts>;
}

/**
 * The database part of the description: the readiness checks run fresh and the migration state.
 * Concurrent callers share the probe in flight (never a finished one), so load on /ops/system does
 * not multiply queries.
 */
export function createDatabaseProbe(deps: Pick<SystemDeps, 'readiness' | 'readMigrations'>): () => Promise<DatabaseProbe> {
  let inFlight: Promise<DatabaseProbe> | undefined;
  return () =>
    (inFlight ??= (async () => {
      const [report, migrations] = await Promise.allSettled([deps.readiness.runFresh(), withTimeout(deps.readMigrations(), 2_000)]);
      return { report, migrations };
    })().finally(() => {
      inFlight = undefined;
    }));
}

/**
 * Describes the instance that answers. A failing database never fails the answer: it shows in
 * `database` and `checks`, as fixed sentences, never the driver's text. `ping_ms` is the database
 * check's round trip.
 */
export async function describeSystem(deps: SystemDeps, probe: () => Promise<DatabaseProbe>): Promise<SystemDescription> {
  const { report, migrations: migrationsResult } = await probe();
  const databaseCheck = report.status === 'fulfilled' ? report.value.checks.find((check) => check.name === 'database') : undefined;
  let error: string | undefined;
  if (databaseCheck?.status !== 'ok') {
    error = DATABASE_UNREACHABLE;
  } else if (migrationsResult.status === 'rejected') {
    error = MIGRATIONS_UNREADABLE;
  }
  const { pool } = deps;
  const stats = pool.stats;
  const migrations =
    migrationsResult.status === 'fulfilled'
      ? { current: migrationsResult.value.current, latest: migrationsResult.value.latest, pending: migrationsResult.value.pending }
      : { current: 0, latest: deps.latestMigration, pending: 0 };
  const uptimeSeconds = Math.floor((Date.now() - deps.instance.startedAt.getTime()) / 1000);
  return {
    checks: report.status === 'fulfilled' ? report.value.checks : [],
    database: {
      status: error ? 'error' : 'ok',
      ...(error ? { error } : {}),
      ping_ms: databaseCheck?.status === 'ok' ? databaseCheck.duration_ms : 0,
      pool: {
        acquires: stats.acquires,
        average_acquire_ms: stats.acquires ? Math.round((stats.acquireMsTotal / stats.acquires) * 1000) / 1000 : 0,
        canceled_acquires: stats.canceledAcquires,
        empty_acquires: stats.emptyAcquires,
        idle: pool.idleCount,
        in_use: pool.totalCount - pool.idleCount,
        max: pool.options.max ?? 10,
        total: pool.totalCount,
      },
      migrations,
    },
    instance: {
      id: deps.instance.id,
      version: deps.instance.version,
      ...(deps.instance.commit ? { commit: deps.instance.commit } : {}),
      ...(deps.instance.buildTime ? { build_time: deps.instance.buildTime } : {}),
      modified: deps.instance.modified,
      started_at: deps.instance.startedAt.toISOString(),
      uptime_seconds: uptimeSeconds,
    },
    jobs: { workers: deps.jobs.workers, queues: [...deps.jobs.queues] },
    runtime: deps.runtime.sample(),
  };
}
