import { loadApiExamples } from './apiExamples.ts';
import { auditModule } from '../modules/audit/index.ts';
import { authModule } from '../modules/auth/index.ts';
import { healthModule } from '../modules/health/index.ts';
import { identitiesModule } from '../modules/identities/index.ts';
import { jobsModule } from '../modules/jobs/index.ts';
import { isOpenDuringMaintenance, maintenanceModule } from '../modules/maintenance/index.ts';
import { openApiModule } from '../modules/openapi/index.ts';
import { type RateLimitSettings, countsPerAddress, rateLimitModule } from '../modules/ratelimit/index.ts';
import { releasesModule } from '../modules/releases/index.ts';
import { retentionModule } from '../modules/retention/index.ts';
import { settingsModule } from '../modules/settings/index.ts';
import { ensureAuditEventPartitions } from '../modules/audit/index.ts';
import { platformStatuses } from '../platform/http/errors.ts';
import { buildOpenApiDocument } from '../platform/http/openapi.ts';
import { mergeStatusTables } from '../platform/http/problem.ts';
import { type AnyRoute, type BoundRoute, bindRoutes } from '../platform/http/route.ts';
import type { JobDefinition } from '../platform/jobs.ts';
import { type Module, type Started, routesOf } from '../platform/module.ts';
import type { Config } from './config.ts';
import { encryptionKeyText, openSecretBox } from './encryptionKey.ts';
import { canStillSignIn, identityAccounts, providerSignIn } from './identities.ts';
import { coveredRateLimitKeys, settingsRateLimits, signInAttempts } from './rateLimits.ts';
import { RETENTION_TARGETS, auditRetentionPurge, retentionJobStatus, retentionSettings } from './retention.ts';
import type { Platform } from './platform.ts';
import { testJobDefinitions } from './testJobs.ts';
import { hostname } from 'node:os';

/** Every capability, in the order an instance creates them: each one's needs come from those before it. */
export const MODULES = [
  auditModule,
  settingsModule,
  releasesModule,
  rateLimitModule,
  authModule,
  maintenanceModule,
  identitiesModule,
  retentionModule,
  jobsModule,
  healthModule,
  openApiModule,
] as const;

export const API_INFO = {
  title: 'Backplane',
  description: 'Operations interface of a clustered Node.js back end: health, settings, jobs, audit, retention, maintenance and sign-in protections.',
};

export const statusTables = () => MODULES.map((module) => module.statuses);

/** Codes a route answers before its handler runs: maintenance mode, and the per-address limit on sign-in. */
const implicitProblems = (route: AnyRoute): string[] => [
  ...(isOpenDuringMaintenance(route.method, route.path) ? [] : ['maintenance']),
  ...(countsPerAddress(route.method, route.path) ? ['rate_limited'] : []),
];

/** The OpenAPI document, from the modules' static routes and status tables alone (no database, no instance). */
export const apiDocument = (version: string) =>
  buildOpenApiDocument(routesOf(MODULES), { ...API_INFO, version }, { statuses: mergeStatusTables([platformStatuses, ...statusTables()]), implicitProblems, examples: loadApiExamples() });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each module has its own needs and api
type AnyStarted = { module: Module<any, any, any>; started: Started<unknown, unknown> };

export interface InstanceModules {
  /** Every route, bound to its module's dependencies, for the router. */
  routes: BoundRoute[];
  auth: Awaited<ReturnType<typeof authModule.create>>['api'];
  rateLimits: Awaited<ReturnType<typeof rateLimitModule.create>>['api'];
  maintenance: Awaited<ReturnType<typeof maintenanceModule.create>>['api'];
  health: Awaited<ReturnType<typeof healthModule.create>>['api'];
  /** Starts what modules run once the instance serves (heartbeat, scheduler, workers). */
  start(): void;
  /** Lets modules' work in progress finish within the timeout (job runs), beside the requests' drain. */
  drain(timeoutMs: number): Promise<void>;
  /** Closes every module, in the reverse of the order they were created. */
  close(): Promise<void>;
}

export interface ModuleOptions {
  rateLimits?: RateLimitSettings | undefined;
  rateLimitTimeoutMs?: number | undefined;
}

/** Creates every module of one instance, in order; a module that fails to start closes those before it. */
export async function createModules(config: Config, platform: Platform, options: ModuleOptions = {}): Promise<InstanceModules> {
  const created: AnyStarted[] = [];
  const closeAll = async () => {
    for (const { started } of [...created].reverse()) {
      await started.close?.();
    }
  };
  async function add<N, A, D>(module: Module<N, A, D>, needs: N): Promise<A> {
    const started = await module.create(needs);
    created.push({ module, started: started as Started<unknown, unknown> });
    return started.api;
  }
  const { pool, listener, logger, registry, build } = platform;
  try {
    const { recordAudit } = await add(auditModule, { pool });
    // Loaded before serving: an instance started during maintenance starts in maintenance.
    const settings = await add(settingsModule, { pool, listener, logger, recordAudit });
    const releases = await add(releasesModule, {
      pool,
      listener,
      logger,
      heartbeatSeconds: config.heartbeatSeconds,
      instance: {
        instanceId: platform.instanceId,
        version: build.version,
        commit: build.commit,
        buildTime: build.buildTime,
        modified: build.modified,
        runtimeVersion: process.version,
        host: hostname(),
        pid: process.pid,
      },
    });
    const rateLimits = await add(rateLimitModule, {
      decide: platform.rateLimitDecisions,
      limits: options.rateLimits ?? settingsRateLimits(settings.reader),
      logger,
      registry,
      decisionTimeoutMs: options.rateLimitTimeoutMs,
      // Until every running instance has counted this one, deciding alone grants nothing (ADR 0020, amended 2026-11-26).
      liveInstances: releases.shareDivisor,
      ops: { pool, listener, recordAudit, keysOf: coveredRateLimitKeys },
    });
    const auth = await add(authModule, {
      pool,
      listener,
      logger,
      jwtPrivateKey: config.jwtPrivateKey,
      secrets: openSecretBox(config),
      mfaPolicy: { opsRequireMfa: () => settings.reader.boolean('auth.ops_require_mfa') },
      attempts: signInAttempts(rateLimits.limiter),
      recordAudit,
    });
    const maintenance = await add(maintenanceModule, {
      registry,
      settings: {
        enabled: () => settings.reader.boolean('maintenance.enabled'),
        message: () => settings.reader.string('maintenance.message'),
        retryAfterSeconds: () => settings.reader.duration('maintenance.retry_after'),
      },
    });
    const keyText = encryptionKeyText(config);
    await add(identitiesModule, {
      pool,
      logger,
      registry,
      runTask: platform.tasks.runTask,
      providers: config.oidcProviders,
      box: openSecretBox(config),
      encryptionKeys: keyText,
      publicUrl: config.publicUrl,
      accounts: identityAccounts,
      completeSignIn: providerSignIn(auth.signingKey, recordAudit),
      canStillSignIn,
      identifyCaller: auth.identifyBearer,
      recordAudit,
    });
    // The retention job reads its own status from the jobs module, created after it (its jobs go there).
    const jobsCreated: { service?: Awaited<ReturnType<typeof jobsModule.create>>['api']['service'] } = {};
    await add(retentionModule, {
      targets: RETENTION_TARGETS,
      pool,
      connectionString: platform.directUrl,
      purgeConnections: config.pools.taskThread,
      settings: retentionSettings(settings.reader),
      jobStatus: (db) => retentionJobStatus(jobsCreated.service!, db),
      ensureAuditEventPartitions: () => ensureAuditEventPartitions(pool),
      recordPurge: auditRetentionPurge,
    });
    const definitions: JobDefinition[] = [...created.flatMap(({ started }) => started.jobs ?? []), ...(config.testJobs ? testJobDefinitions() : [])];
    const jobs = await add(jobsModule, {
      pool,
      listener,
      logger,
      registry,
      runTask: platform.tasks.runTask,
      instanceId: platform.instanceId,
      definitions,
      workers: config.jobWorkers,
      queues: config.jobQueues,
      leaseSeconds: config.jobLeaseSeconds,
      runningInstances: releases.runningInstances,
      recordAudit,
    });
    jobsCreated.service = jobs.service;
    const health = await add(healthModule, {
      pool,
      logger,
      registry,
      instance: { id: platform.instanceId, ...build, startedAt: platform.startedAt },
      checks: created.flatMap(({ started }) => started.readiness ?? []),
      jobs: jobs.workerInfo,
      readinessRequiresDatabase: config.readinessRequiresDatabase,
    });
    await add(openApiModule, { document: () => apiDocument(build.version) });
    return {
      routes: created.flatMap(({ module, started }) => bindRoutes(module.routes, started.routeDeps)),
      auth,
      rateLimits,
      maintenance,
      health,
      start: () => created.forEach(({ started }) => started.start?.()),
      drain: async (timeoutMs) => void (await Promise.all(created.map(({ started }) => started.drain?.(timeoutMs)))),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
