import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import client from 'prom-client';
import { type AuditEventInput, auditStatuses, createAuditQueries, ensureAuditEventPartitions, recordAuditEvent } from '../modules/audit/index.ts';
import { createAuthModule, createRoleChanges } from '../modules/auth/index.ts';
import { createReadiness } from '../modules/health/readiness.ts';
import { registerRuntimeMetrics } from '../modules/health/metrics.ts';
import { createRuntimeSampler } from '../modules/health/runtimeStats.ts';
import { createJobsModule } from '../modules/jobs/index.ts';
import { maintenanceMode, maintenanceStatuses } from '../modules/maintenance/index.ts';
import { trackInstance } from '../modules/releases/index.ts';
import { createRetentionModule } from '../modules/retention/index.ts';
import { createSettingsModule, settingsStatuses } from '../modules/settings/index.ts';
import { createNotificationListener } from '../platform/db/listener.ts';
import { listMigrationFiles, migrationStatus } from '../platform/db/migrations.ts';
import { type Queryable, createPool } from '../platform/db/pool.ts';
import { createLogger } from '../platform/logging/logger.ts';
import { registerPoolMetrics } from '../platform/metrics/dbPool.ts';
import { createHttpMetrics, createRegistry } from '../platform/metrics/registry.ts';
import { createTaskPool } from '../platform/tasks/pool.ts';
import { loadBuildInfo } from './buildInfo.ts';
import type { Config } from './config.ts';
import { createHttpApp } from './http.ts';
import { auditJobDefinitionChanges, jobDefinitions } from './jobs.ts';
import { auditRetentionPurge, retentionJobStatus, retentionSettings } from './retention.ts';
import { createRoutes } from './routes.ts';

export interface RunningInstance {
  id: string;
  server: Server;
  url: string;
  registry: client.Registry;
  /** Stops accepting, lets in-flight requests finish (bounded), marks the instance stopped. */
  drain(): Promise<void>;
}

/** One instance: its own pool, listener, caches and Koa app on the shared port. */
export async function startInstance(config: Config, options: { workerSlot?: string } = {}): Promise<RunningInstance> {
  if (!config.databaseUrl) {
    throw new Error('an instance needs DATABASE_URL; `backplane serve` sets it for its instances');
  }
  const instanceId = randomBytes(8).toString('hex');
  const startedAt = new Date();
  const build = loadBuildInfo();
  const logger = createLogger(config.logLevel, { instance_id: instanceId });
  const pool = createPool({ connectionString: config.databaseUrl, max: 10, applicationName: `backplane-${instanceId}` });
  const listener = createNotificationListener(config.databaseUrl, logger);
  const registry = createRegistry(options.workerSlot ?? '0');
  registerPoolMetrics(registry, pool);
  new client.Gauge({
    name: 'backplane_instance_info',
    help: 'The instance behind a worker slot: 1 labelled with its id and version',
    labelNames: ['instance_id', 'version'],
    registers: [registry],
  }).set({ instance_id: instanceId, version: build.version }, 1);

  // Audit events commit with the change they record: each module passes its transaction.
  const recordAudit = async (tx: Queryable, event: AuditEventInput) => void (await recordAuditEvent(tx, event));
  // Loaded before serving: an instance started during maintenance starts in maintenance.
  const settings = await createSettingsModule({ pool, listener, logger, recordAudit });
  const auth = await createAuthModule({
    db: pool,
    listener,
    logger,
    jwtPrivateKey: config.jwtPrivateKey,
    mfaPolicy: { opsRequireMfa: () => settings.reader.boolean('auth.ops_require_mfa') },
  });
  const runtime = createRuntimeSampler();
  registerRuntimeMetrics(registry, runtime);
  const readiness = createReadiness(
    [{ name: 'database', failure: 'the database did not answer', run: async () => void (await pool.query('select 1')) }],
    { onFailure: (name, error) => logger.warn({ check: name, err: error }, 'readiness check failed') },
  );
  const migrationFiles = listMigrationFiles();
  const latestMigration = Math.max(0, ...migrationFiles.map((file) => file.version));
  const tasks = createTaskPool({ threads: config.taskThreads, closeTimeoutMs: config.drainTimeoutMs, registry, logger });
  const retention = createRetentionModule({
    pool,
    connectionString: config.databaseUrl,
    settings: retentionSettings(settings.reader),
    // Called only once the jobs module below exists: when a run starts or the overview is asked for.
    jobStatus: () => retentionJobStatus(jobs.service),
    ensureAuditEventPartitions: () => ensureAuditEventPartitions(pool),
    recordPurge: auditRetentionPurge,
  });
  const jobs = createJobsModule({
    pool,
    listener,
    logger,
    registry,
    runTask: tasks.runTask,
    instanceId,
    definitions: jobDefinitions(config, { retention: retention.job }),
    workers: config.jobWorkers,
    queues: config.jobQueues,
    leaseSeconds: config.jobLeaseSeconds,
    recordDefinitionChange: auditJobDefinitionChanges(),
  });

  const routes = createRoutes(
    {
      db: pool,
      signingKey: auth.signingKey,
      settings: settings.service,
      audit: createAuditQueries(pool),
      roles: createRoleChanges(pool, recordAudit),
      heartbeatSeconds: config.heartbeatSeconds,
      jobs: jobs.service,
      retention: retention.service,
      system: {
        instance: { id: instanceId, ...build, startedAt },
        pool,
        readiness,
        runtime,
        jobs: jobs.workerInfo,
        latestMigration,
        readMigrations: () => migrationStatus(pool, migrationFiles),
      },
    },
    build.version,
  );

  const app = createHttpApp({
    logger,
    routes,
    guard: auth.guard,
    statuses: [auth.statuses, settingsStatuses, auditStatuses, maintenanceStatuses, jobs.statuses, retention.statuses],
    metrics: createHttpMetrics(registry),
    bodyLimitBytes: config.bodyLimitBytes,
    draining: () => readiness.draining,
    beforeRoutes: [
      maintenanceMode({
        enabled: () => settings.reader.boolean('maintenance.enabled'),
        message: () => settings.reader.string('maintenance.message'),
        retryAfterSeconds: () => settings.reader.duration('maintenance.retry_after'),
      }),
    ],
  });
  const server = app.listen({ port: config.port, host: config.host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const tracker = trackInstance(
    pool,
    {
      instanceId,
      version: build.version,
      commit: build.commit,
      buildTime: build.buildTime,
      modified: build.modified,
      runtimeVersion: process.version,
      host: hostname(),
      pid: process.pid,
    },
    logger,
    config.heartbeatSeconds * 1000,
  );
  jobs.start();
  logger.info({ port, version: build.version, commit: build.commit }, 'instance started');

  let draining: Promise<void> | undefined;
  const drain = () =>
    (draining ??= (async () => {
      logger.info('instance draining');
      readiness.startDraining();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.drainTimeoutMs);
      // Requests and job runs drain side by side, each within the drain timeout.
      await Promise.all([closed, jobs.stop(config.drainTimeoutMs)]);
      clearTimeout(timer);
      await tasks.close();
      await tracker.stop();
      auth.close();
      settings.close();
      runtime.stop();
      await listener.close();
      await pool.end().catch(() => undefined);
      logger.info('instance stopped');
    })());

  return { id: instanceId, server, url: `http://127.0.0.1:${port}`, registry, drain };
}
