import { hostname } from 'node:os';
import { auditModule, ensureAuditEventPartitions } from '../modules/audit/index.ts';
import { authModule } from '../modules/auth/index.ts';
import { healthModule } from '../modules/health/index.ts';
import { identitiesModule } from '../modules/identities/index.ts';
import { jobsModule } from '../modules/jobs/index.ts';
import { maintenanceModule } from '../modules/maintenance/index.ts';
import { openApiModule } from '../modules/openapi/index.ts';
import { rateLimitModule } from '../modules/ratelimit/index.ts';
import { releasesModule } from '../modules/releases/index.ts';
import { retentionModule } from '../modules/retention/index.ts';
import { settingsModule } from '../modules/settings/index.ts';
import type { RecordAudit } from '../platform/audit.ts';
import type { AgingTarget } from '../platform/db/aging.ts';
import type { JobDefinition } from '../platform/jobs.ts';
import type { AnyModule, Module, ModuleContext, ModuleDefinition, Started } from '../platform/module.ts';
import type { ReadinessCheck } from '../platform/readiness.ts';
import type { Config } from './config.ts';
import { encryptionKeyText, openSecretBox } from './encryptionKey.ts';
import { canStillSignIn, identityAccounts, providerSignIn } from './identities.ts';
import type { Platform } from './platform.ts';
import { coveredRateLimitKeys, decideForPod, settingsRateLimits, signInAttempts } from './rateLimits.ts';
import { auditRetentionPurge, retentionJobStatus, retentionSettings } from './retention.ts';
import type { RateLimitSettings } from '../modules/ratelimit/index.ts';
import type { BackplaneSettingsReader } from './backplaneSettings.ts';

/** What Backplane's own modules are given beyond the public context: the configuration, the platform, the composed lists. */
export interface BuiltContext extends ModuleContext {
  config: Config;
  platform: Platform;
  options: { rateLimits?: RateLimitSettings | undefined; rateLimitTimeoutMs?: number | undefined };
  /** Jobs and readiness checks of the modules created so far, static jobs of every module; retention targets of every module. */
  collected: { jobs(): JobDefinition[]; readiness(): ReadinessCheck[]; retention: readonly AgingTarget[]; document(): unknown };
  /** The api of a module created after this one, once it is (retention reads the jobs module's status). */
  later<Api>(name: string): Api;
}

type Api<M> = M extends { create(needs: never): infer R } ? Awaited<R> extends { api: infer A } ? A : never : never;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each part has its own needs
type AnyPart = Module<any, any, any>;
type Created<P extends AnyPart> = Awaited<ReturnType<P['create']>>;

/**
 * One of Backplane's own modules as the application composes it: its declarations from its folder,
 * its needs by name, and where each of its hand-shaped needs comes from (the one app-level wiring).
 */
function wire<P extends AnyPart>(
  part: P,
  needs: string[],
  needsOf: (context: BuiltContext) => Parameters<P['create']>[0],
  extend?: (created: Created<P>, context: BuiltContext) => Partial<Started<unknown, unknown>>,
): ModuleDefinition<Api<P>> {
  const { create, ...declarations } = part;
  return {
    ...declarations,
    needs,
    async create(context) {
      const built = context as BuiltContext;
      const created = (await create(needsOf(built))) as Created<P>;
      return { ...created, ...extend?.(created, built) };
    },
  };
}

type SettingsApi = Api<typeof settingsModule>;
const recordAudit = (context: BuiltContext) => context.use<Api<typeof auditModule>>('audit').recordAudit as RecordAudit;
const settings = (context: BuiltContext): BackplaneSettingsReader => context.use<SettingsApi>('settings').reader;

/** Backplane's own modules, in the order an instance creates them. */
export const backplaneModules: readonly AnyModule[] = [
  wire(auditModule, [], ({ pool }) => ({ pool })),
  // Loaded before serving: an instance started during maintenance starts in maintenance.
  wire(settingsModule, ['audit'], (c) => ({ pool: c.pool, listener: c.listener, logger: c.logger, recordAudit: recordAudit(c) })),
  wire(releasesModule, [], (c) => ({
    pool: c.pool,
    listener: c.listener,
    logger: c.logger,
    heartbeatSeconds: c.config.heartbeatSeconds,
    instance: {
      instanceId: c.instanceId,
      version: c.platform.build.version,
      commit: c.platform.build.commit,
      buildTime: c.platform.build.buildTime,
      modified: c.platform.build.modified,
      runtimeVersion: process.version,
      host: hostname(),
      pid: process.pid,
    },
  })),
  {
    ...wire(
      rateLimitModule,
      ['audit', 'settings', 'releases'],
      (c) => ({
        decide: c.platform.rateLimitDecisions,
        limits: c.options.rateLimits ?? settingsRateLimits(settings(c)),
        logger: c.logger,
        registry: c.registry,
        decisionTimeoutMs: c.options.rateLimitTimeoutMs,
        // Until every running instance has counted this one, deciding alone grants nothing (ADR 0020, amended 2026-11-26).
        liveInstances: c.use<Api<typeof releasesModule>>('releases').shareDivisor,
        ops: { pool: c.pool, listener: c.listener, recordAudit: recordAudit(c), keysOf: coveredRateLimitKeys },
      }),
      (created, c) => {
        // Looked up once: the early answer runs for every request.
        const reader = settings(c);
        return {
          middleware: {
            // A flood's refusals, known from memory, are answered before Koa; maintenance answers first.
            early: (request) => (reader.boolean('maintenance.enabled') ? undefined : created.api.refuseFromMemory(request)),
          },
        };
      },
    ),
    // APP_RATELIMIT_BATCHING=pod: one decision pool in the primary answers every instance's batches.
    primaryWork: ({ config, databaseUrl, registry }) => {
      const { rateLimitBatching, pools, rateLimitSpacingMs, instances, databasePooling } = config as Config;
      return rateLimitBatching === 'pod'
        ? decideForPod(databaseUrl, { connections: pools.rateLimit, spacingMs: rateLimitSpacingMs, instances, pooling: databasePooling, registry })
        : undefined;
    },
  },
  wire(authModule, ['audit', 'settings', 'ratelimit'], (c) => ({
    pool: c.pool,
    listener: c.listener,
    logger: c.logger,
    jwtPrivateKey: c.config.jwtPrivateKey,
    secrets: openSecretBox(c.config),
    mfaPolicy: { opsRequireMfa: () => settings(c).boolean('auth.ops_require_mfa') },
    attempts: signInAttempts(c.use<Api<typeof rateLimitModule>>('ratelimit').limiter),
    recordAudit: recordAudit(c),
  })),
  wire(
    maintenanceModule,
    ['settings', 'ratelimit'],
    (c) => {
      const reader = settings(c);
      return {
        registry: c.registry,
        settings: {
          enabled: () => reader.boolean('maintenance.enabled'),
          message: () => reader.string('maintenance.message'),
          retryAfterSeconds: () => reader.duration('maintenance.retry_after'),
        },
      };
    },
    // Maintenance answers before limits are spent; then the per-address limit on /auth.
    (created, c) => ({ middleware: { beforeBody: [created.api.middleware, c.use<Api<typeof rateLimitModule>>('ratelimit').perAddress] } }),
  ),
  wire(identitiesModule, ['audit', 'auth'], (c) => {
    const auth = c.use<Api<typeof authModule>>('auth');
    return {
      pool: c.pool,
      logger: c.logger,
      registry: c.registry,
      runTask: c.runTask,
      providers: c.config.oidcProviders,
      box: openSecretBox(c.config),
      encryptionKeys: encryptionKeyText(c.config),
      publicUrl: c.config.publicUrl,
      accounts: identityAccounts,
      completeSignIn: providerSignIn(auth.signingKey, recordAudit(c)),
      canStillSignIn,
      identifyCaller: auth.identifyBearer,
      recordAudit: recordAudit(c),
    };
  }),
  wire(retentionModule, ['audit', 'settings'], (c) => {
    // The retention job reads its own status from the jobs module, created after it (its jobs go there).
    const jobs = () => c.later<Api<typeof jobsModule>>('jobs').service;
    return {
      targets: c.collected.retention,
      pool: c.pool,
      connectionString: c.platform.directUrl,
      purgeConnections: c.config.pools.taskThread,
      settings: retentionSettings(settings(c)),
      jobStatus: (db) => retentionJobStatus(jobs(), db),
      ensureAuditEventPartitions: () => ensureAuditEventPartitions(c.pool),
      recordPurge: auditRetentionPurge,
    };
  }),
  wire(jobsModule, ['audit', 'releases'], (c) => ({
    pool: c.pool,
    listener: c.listener,
    logger: c.logger,
    registry: c.registry,
    runTask: c.runTask,
    instanceId: c.instanceId,
    definitions: c.collected.jobs(),
    workers: c.serving ? c.config.jobWorkers : 0,
    queues: c.serving ? c.config.jobQueues : [],
    leaseSeconds: c.config.jobLeaseSeconds,
    runningInstances: c.serving ? c.use<Api<typeof releasesModule>>('releases').runningInstances : () => undefined,
    recordAudit: recordAudit(c),
  })),
  wire(healthModule, ['jobs'], (c) => ({
    pool: c.platform.pool,
    logger: c.logger,
    registry: c.registry,
    instance: { id: c.instanceId, ...c.platform.build, startedAt: c.platform.startedAt },
    checks: c.collected.readiness(),
    jobs: c.use<Api<typeof jobsModule>>('jobs').workerInfo,
    readinessRequiresDatabase: c.config.readinessRequiresDatabase,
  })),
  wire(openApiModule, [], (c) => ({ document: c.collected.document as () => never })),
];

/** Modules that collect from every other one (jobs, readiness, the document): created after the application's. */
export const COLLECTING_MODULES: ReadonlySet<string> = new Set(['jobs', 'health', 'openapi']);
