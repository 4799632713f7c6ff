import { randomBytes } from 'node:crypto';
import client from 'prom-client';
import type { Logger } from 'pino';
import type { TakeBuckets } from '../modules/ratelimit/index.ts';
import { type NotificationListener, createNotificationListener } from '../platform/db/listener.ts';
import { type InstrumentedPool, createPool } from '../platform/db/pool.ts';
import { createLogger } from '../platform/logging/logger.ts';
import { registerPoolMetrics } from '../platform/metrics/dbPool.ts';
import { type Registry, createRegistry } from '../platform/metrics/registry.ts';
import { type TaskPool, createTaskPool } from '../platform/tasks/pool.ts';
import { type BuildInfo, loadBuildInfo } from './buildInfo.ts';
import type { Config } from './config.ts';
import { openRateLimitPool } from '../modules/ratelimit/index.ts';
import type { AgingTarget } from '../platform/db/aging.ts';

/** What every module of an instance shares: its identity, logger, connections, metrics and threads. */
export interface Platform {
  instanceId: string;
  /** PostgreSQL itself, bypassing a transaction pooler: DATABASE_LISTEN_URL when set. */
  directUrl: string;
  startedAt: Date;
  build: BuildInfo;
  logger: Logger;
  pool: InstrumentedPool;
  /**
   * Where rate-limit decisions are made: a pool reserved for them, so they never queue behind other
   * queries, or the pod's primary (then this instance opens no decision connection).
   */
  rateLimitDecisions: { pool: InstrumentedPool; connections: number } | { pod: TakeBuckets };
  listener: NotificationListener;
  registry: Registry;
  tasks: TaskPool;
  /** Closes what was opened here, after every module has closed. */
  close(): Promise<void>;
}

export interface PlatformOptions {
  workerSlot?: string | undefined;
  rateLimitTimeoutMs?: number | undefined;
  /** The pod's primary decides this instance's rate limits (a forked instance, APP_RATELIMIT_BATCHING=pod). */
  rateLimitPod?: TakeBuckets | undefined;
  /** The application's retention targets, whose purge tasks a thread keeps loaded. */
  retention?: readonly AgingTarget[] | undefined;
}

export function openPlatform(config: Config & { databaseUrl: string }, options: PlatformOptions): Platform {
  const instanceId = randomBytes(8).toString('hex');
  const build = loadBuildInfo();
  const logger = createLogger(config.logLevel, { instance_id: instanceId });
  const pooling = config.databasePooling;
  // LISTEN and the purges' session options need PostgreSQL itself, not a transaction pooler (ADR 0092).
  const directUrl = config.databaseListenUrl ?? config.databaseUrl;
  const pool = createPool({ connectionString: config.databaseUrl, max: config.pools.main, applicationName: `backplane-${instanceId}`, pooling });
  const rateLimitPool = options.rateLimitPod
    ? undefined
    : openRateLimitPool(config.databaseUrl, `backplane-${instanceId}-ratelimit`, options.rateLimitTimeoutMs, { connections: config.pools.rateLimit, pooling });
  const listener = createNotificationListener(directUrl, logger);
  const registry = createRegistry(options.workerSlot ?? '0');
  registerPoolMetrics(registry, pool);
  new client.Gauge({
    name: 'backplane_instance_info',
    help: 'The instance behind a worker slot: 1 labelled with its id and version',
    labelNames: ['instance_id', 'version'],
    registers: [registry],
  }).set({ instance_id: instanceId, version: build.version }, 1);
  const tasks = createTaskPool({
    threads: config.taskThreads,
    closeTimeoutMs: config.drainTimeoutMs,
    registry,
    logger,
    instanceId,
    // An instance that runs jobs keeps a thread with the retention tasks loaded: a run starts deleting at once.
    preload: config.jobWorkers > 0 ? (options.retention ?? []).map((target) => target.task) : [],
  });
  return {
    instanceId,
    directUrl,
    startedAt: new Date(),
    build,
    logger,
    pool,
    rateLimitDecisions: rateLimitPool ? { pool: rateLimitPool, connections: config.pools.rateLimit } : { pod: options.rateLimitPod! },
    listener,
    registry,
    tasks,
    async close() {
      await tasks.close();
      await listener.close();
      await pool.end().catch(() => undefined);
      await rateLimitPool?.end().catch(() => undefined);
    },
  };
}
