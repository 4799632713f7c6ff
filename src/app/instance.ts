import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import client from 'prom-client';
import { type AuditEventInput, auditStatuses, createAuditQueries, ensureAuditEventPartitions, recordAuditEvent } from '../modules/audit/index.ts';
import { createAuthModule, createRoleChanges } from '../modules/auth/index.ts';
import { createReadiness } from '../modules/health/readiness.ts';
import { registerRuntimeMetrics } from '../modules/health/metrics.ts';
import { createRuntimeSampler } from '../modules/health/runtimeStats.ts';
import { createIdentitiesModule } from '../modules/identities/index.ts';
import { createJobsModule } from '../modules/jobs/index.ts';
import { maintenanceMode, maintenanceStatuses, registerMaintenanceMetrics } from '../modules/maintenance/index.ts';
import { type RateLimitSettings, createRateLimitModule } from '../modules/ratelimit/index.ts';
import { trackInstance } from '../modules/releases/index.ts';
import { RETENTION_KINDS, createRetentionModule } from '../modules/retention/index.ts';
import { createSettingsModule, settingsStatuses } from '../modules/settings/index.ts';
import { withDatabaseDeadline } from '../platform/db/deadline.ts';
import { createNotificationListener } from '../platform/db/listener.ts';
import { listMigrationFiles, migrationStatus } from '../platform/db/migrations.ts';
import { type Queryable, createPool } from '../platform/db/pool.ts';
import { createClientAddressResolver } from '../platform/http/clientAddress.ts';
import { trackConnections } from '../platform/http/connections.ts';
import { createLogger } from '../platform/logging/logger.ts';
import { registerPoolMetrics } from '../platform/metrics/dbPool.ts';
import { createHttpMetrics, createRegistry } from '../platform/metrics/registry.ts';
import { createSecretBox, parseEncryptionKeys } from '../platform/secrets/secretBox.ts';
import { createTaskPool } from '../platform/tasks/pool.ts';
import { loadBuildInfo } from './buildInfo.ts';
import type { Config } from './config.ts';
import { encryptionKeyText } from './encryptionKey.ts';
import { createHttpServer } from './http.ts';
import { providerSignIn, canStillSignIn, identifyCaller, identityAccounts } from './identities.ts';
import { auditJobDefinitionChanges, jobDefinitions } from './jobs.ts';
import { openSecretBox } from './encryptionKey.ts';
import { openRateLimitPool, settingsRateLimits, signInAttempts } from './rateLimits.ts';
import { auditRetentionPurge, retentionJobStatus, retentionSettings } from './retention.ts';
import { createRoutes } from './routes.ts';

/** The database probes of /readyz and /ops/system give up after 2 s (their own bound) of waiting. */
const PROBE_DEADLINE_MS = 2_000;

export interface RunningInstance {
  id: string;
  server: Server;
  url: string;
  registry: client.Registry;
  /** Stops accepting, lets in-flight requests finish (bounded), marks the instance stopped. */
  drain(options?: DrainOptions): Promise<void>;
}

export interface DrainOptions {
  /**
   * Resolves once no new connection can reach this instance's port any more (in a cluster, when
   * every instance has stopped accepting). Until then keep-alive connections are kept alive: a
   * client told to reconnect would race the listener's close.
   */
  listenerClosed?: () => Promise<void>;
  /** How long a connection may stay idle before it is ended; min(5 s, half the drain timeout) unless given. */
  idleGraceMs?: number;
}

/** How long a connection may stay idle during a drain before it is ended (see trackConnections). */
const idleGraceMs = (drainTimeoutMs: number) => Math.min(5_000, drainTimeoutMs / 2);

/** One instance: its own pool, listener, caches and Koa app on the shared port. */
export async function startInstance(
  config: Config,
  options: { workerSlot?: string; rateLimits?: RateLimitSettings; rateLimitTimeoutMs?: number } = {},
): Promise<RunningInstance> {
  if (!config.databaseUrl) {
    throw new Error('an instance needs DATABASE_URL; `backplane serve` sets it for its instances');
  }
  const instanceId = randomBytes(8).toString('hex');
  const startedAt = new Date();
  const build = loadBuildInfo();
  const logger = createLogger(config.logLevel, { instance_id: instanceId });
  const pooling = config.databasePooling;
  // LISTEN and the purges' session options need PostgreSQL itself, not a transaction pooler (ADR 0092).
  const directUrl = config.databaseListenUrl ?? config.databaseUrl;
  const pool = createPool({ connectionString: config.databaseUrl, max: config.pools.main, applicationName: `backplane-${instanceId}`, pooling });
  const rateLimitPool = openRateLimitPool(config.databaseUrl, `backplane-${instanceId}-ratelimit`, options.rateLimitTimeoutMs, {
    connections: config.pools.rateLimit,
    pooling,
  });
  const listener = createNotificationListener(directUrl, logger);
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
  // The heartbeat, started once serving, reads the count; until its first beat, deciding alone grants nothing.
  let liveInstances = (): number | undefined => undefined;
  const rateLimits = createRateLimitModule({
    db: rateLimitPool,
    connections: config.pools.rateLimit,
    limits: options.rateLimits ?? settingsRateLimits(settings.reader),
    logger,
    registry,
    decisionTimeoutMs: options.rateLimitTimeoutMs,
    liveInstances: () => liveInstances(),
  });
  void rateLimits.limiter.warm();
  const clientAddress = createClientAddressResolver(config.trustedProxies);
  const runtime = createRuntimeSampler();
  registerRuntimeMetrics(registry, runtime);
  const tasks = createTaskPool({
    threads: config.taskThreads,
    closeTimeoutMs: config.drainTimeoutMs,
    registry,
    logger,
    // An instance that runs jobs keeps a thread with the retention tasks loaded: a run starts deleting at once.
    preload: config.jobWorkers > 0 ? RETENTION_KINDS.map((kind) => kind.task) : [],
  });
  const keyText = encryptionKeyText(config);
  const identities = createIdentitiesModule({
    pool,
    logger,
    registry,
    runTask: tasks.runTask,
    providers: config.oidcProviders,
    box: createSecretBox(parseEncryptionKeys(keyText)!),
    encryptionKeys: keyText,
    publicUrl: config.publicUrl,
    accounts: identityAccounts,
    // The sign-in module's completion replaces this placeholder when it lands (see src/app/identities.ts).
    completeSignIn: providerSignIn(auth.signingKey, recordAudit),
    canStillSignIn,
    identifyCaller: identifyCaller(pool, auth.signingKey),
    recordAudit,
  });
  const readiness = createReadiness(
    [
      // Bounded like a request, so a frozen database costs a probe its connection, not one held per probe until the thaw.
      { name: 'database', failure: 'the database did not answer', run: () => withDatabaseDeadline(PROBE_DEADLINE_MS, async () => void (await pool.query('select 1'))) },
      ...identities.readinessChecks(),
      rateLimits.readinessCheck,
    ],
    { onFailure: (name, error) => logger.warn({ check: name, err: error }, 'readiness check failed') },
  );
  const migrationFiles = listMigrationFiles();
  const latestMigration = Math.max(0, ...migrationFiles.map((file) => file.version));
  const retention = createRetentionModule({
    pool,
    connectionString: directUrl,
    purgeConnections: config.pools.taskThread,
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
    definitions: jobDefinitions(config, { identities, retention: retention.job }),
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
      signIn: {
        pool,
        signingKey: auth.signingKey,
        secrets: openSecretBox(config),
        attempts: signInAttempts(rateLimits.limiter),
        recordAudit,
      },
      heartbeatSeconds: config.heartbeatSeconds,
      jobs: jobs.service,
      identities: identities.routeDeps,
      retention: retention.service,
      system: {
        instance: { id: instanceId, ...build, startedAt },
        pool,
        readiness,
        runtime,
        jobs: jobs.workerInfo,
        latestMigration,
        readMigrations: () => withDatabaseDeadline(PROBE_DEADLINE_MS, () => migrationStatus(pool, migrationFiles)),
      },
    },
    build.version,
  );

  const maintenanceOn = () => settings.reader.boolean('maintenance.enabled');
  registerMaintenanceMetrics(registry, maintenanceOn);
  let closingConnections = false;
  const server = createHttpServer({
    logger,
    routes,
    guard: auth.guard,
    statuses: [auth.statuses, settingsStatuses, auditStatuses, maintenanceStatuses, jobs.statuses, rateLimits.statuses, identities.statuses, retention.statuses],
    metrics: createHttpMetrics(registry),
    bodyLimitBytes: config.bodyLimitBytes,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    requestDeadlineMs: config.requestDeadlineMs,
    draining: () => closingConnections,
    clientAddress: (request) => clientAddress.resolve(request.socket.remoteAddress, request.headers['x-forwarded-for']),
    // A flood's refusals, known from memory, are answered before Koa; maintenance answers first.
    answerEarly: (request) => (maintenanceOn() ? undefined : rateLimits.refuseFromMemory(request)),
    // Maintenance answers before limits are spent; then the per-address limit on /auth.
    beforeBody: [
      maintenanceMode({
        enabled: maintenanceOn,
        message: () => settings.reader.string('maintenance.message'),
        retryAfterSeconds: () => settings.reader.duration('maintenance.retry_after'),
      }),
      rateLimits.perAddress,
    ],
  });
  const connections = trackConnections(server);
  server.listen({ port: config.port, host: config.host });
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
  liveInstances = tracker.runningInstances;
  jobs.start();
  logger.info({ port, version: build.version, commit: build.commit }, 'instance started');

  let draining: Promise<void> | undefined;
  const drain = (options: DrainOptions = {}) =>
    (draining ??= (async () => {
      logger.info('instance draining');
      readiness.startDraining();
      const closed = connections.close();
      const timer = setTimeout(() => server.closeAllConnections(), config.drainTimeoutMs);
      const requestsDone = (async () => {
        // The drain timeout ends every connection, and so this wait, if the listener's close is never reported.
        await Promise.race([options.listenerClosed?.(), closed]);
        // From here every answer says Connection: close, and connections left idle are ended.
        closingConnections = true;
        connections.endIdleConnections(options.idleGraceMs ?? idleGraceMs(config.drainTimeoutMs));
        await closed;
      })();
      // Requests and job runs drain side by side, each within the drain timeout.
      await Promise.all([requestsDone, jobs.stop(config.drainTimeoutMs)]);
      clearTimeout(timer);
      connections.stop();
      await tasks.close();
      identities.close();
      await tracker.stop();
      auth.close();
      settings.close();
      runtime.stop();
      await listener.close();
      await pool.end().catch(() => undefined);
      await rateLimitPool.end().catch(() => undefined);
      logger.info('instance stopped');
    })());

  return { id: instanceId, server, url: `http://127.0.0.1:${port}`, registry, drain };
}
