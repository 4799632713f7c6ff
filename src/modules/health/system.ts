import type { InstrumentedPool } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import type { CheckResult, Readiness, ReadinessReport } from './readiness.ts';
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
export const MIGRATIONS_UNREADABLE = 'the database answered, but the migration state could not be read within 2 seconds';

/** A migration state as last read, and when. */
export interface MigrationsRead {
  counts: MigrationCounts;
  readAt: Date;
}

/** One database probe shared by concurrent /ops/system callers. */
export type DatabaseProbe = () => Promise<ProbeResult>;

interface ProbeResult {
  report: PromiseSettledResult<ReadinessReport>;
  /** Whether this probe read the migration state. */
  migrationsRead: boolean;
  /** The newest state read, by this probe or an earlier one; undefined if none ever was. */
  migrations: MigrationsRead | undefined;
}

/**
 * The database part of the description: the readiness checks run fresh and the migration state.
 * Concurrent callers share the probe in flight (never a finished one), so load on /ops/system does
 * not multiply queries. The last state read is kept, so an outage shows what was last known and
 * when rather than zeros (read on demand only: a query at start-up would compete with the
 * instance's own start).
 */
export function createDatabaseProbe(deps: Pick<SystemDeps, 'readiness' | 'readMigrations'>): DatabaseProbe {
  let inFlight: Promise<ProbeResult> | undefined;
  let lastRead: MigrationsRead | undefined;
  const readMigrations = async () => {
    const { current, latest, pending } = await withTimeout(deps.readMigrations(), 2_000);
    lastRead = { counts: { current, latest, pending }, readAt: new Date() };
  };
  return () =>
    (inFlight ??= (async () => {
      const [report, migrations] = await Promise.allSettled([deps.readiness.runFresh(), readMigrations()]);
      return { report, migrationsRead: migrations.status === 'fulfilled', migrations: lastRead };
    })().finally(() => {
      inFlight = undefined;
    }));
}

/** The database check as /ops/system shows it: failed, naming the migration read, when only that failed. */
function withMigrationsFailure(check: CheckResult, migrations: MigrationsRead | undefined): CheckResult {
  return {
    name: check.name,
    status: 'error',
    duration_ms: check.duration_ms,
    error: MIGRATIONS_UNREADABLE,
    ...(migrations ? { last_ok_at: migrations.readAt.toISOString() } : {}),
  };
}

/**
 * Describes the instance that answers. A failing database never fails the answer: it shows in
 * `database` and `checks`, as fixed sentences, never the driver's text. `ping_ms` is the database
 * check's round trip, or how long it ran before failing. The migration counts are the last ones
 * read, with `read_at`; absent that, the current and pending counts are unknown and shown as 0.
 */
export async function describeSystem(deps: SystemDeps, probe: DatabaseProbe): Promise<SystemDescription> {
  const { report, migrationsRead, migrations: lastRead } = await probe();
  const checks = report.status === 'fulfilled' ? report.value.checks : [];
  const databaseCheck = checks.find((check) => check.name === 'database');
  let error: string | undefined;
  if (databaseCheck?.status !== 'ok') {
    error = DATABASE_UNREACHABLE;
  } else if (!migrationsRead) {
    error = MIGRATIONS_UNREADABLE;
  }
  const { pool } = deps;
  const stats = pool.stats;
  const migrations = lastRead ? { ...lastRead.counts, read_at: lastRead.readAt.toISOString() } : { current: 0, latest: deps.latestMigration, pending: 0 };
  const uptimeSeconds = Math.floor((Date.now() - deps.instance.startedAt.getTime()) / 1000);
  return {
    checks:
      databaseCheck?.status === 'ok' && !migrationsRead
        ? checks.map((check) => (check === databaseCheck ? withMigrationsFailure(check, lastRead) : check))
        : checks,
    database: {
      status: error ? 'error' : 'ok',
      ...(error ? { error } : {}),
      ping_ms: databaseCheck?.duration_ms ?? 0,
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
