import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import pino from 'pino';
import client from 'prom-client';
import type { Config } from '../app/config.ts';
import { RETENTION_TARGETS, auditRetentionPurge, retentionJobStatus, retentionSettings } from '../app/retention.ts';
import { testJobDefinitions } from '../app/testJobs.ts';
import { CLI_ACTOR, auditModule, createAuditQueries, ensureAuditEventPartitions } from '../modules/audit/index.ts';
import { revokeTokensJob } from '../modules/identities/index.ts';
import { type JobsServiceDeps, jobsModule } from '../modules/jobs/index.ts';
import { ratelimitCleanupJob } from '../modules/ratelimit/index.ts';
import { retentionModule } from '../modules/retention/index.ts';
import { settingsModule } from '../modules/settings/index.ts';
import type { ChangedBy } from '../platform/caller.ts';
import type { NotificationListener } from '../platform/db/listener.ts';

/** Logs of the services go to stderr, so stdout stays the command's data (--json). */
export const cliLogger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));

/**
 * A command lives for seconds and reads each table once: it follows no NOTIFY. (A real listener
 * closed while its connect is in flight would also connect afterwards and reload on an ended pool.)
 */
const noNotifications: NotificationListener = {
  listen: () => undefined,
  onConnected: () => undefined,
  listening: async () => undefined,
  connected: false,
  close: async () => undefined,
};

/** Who changes things from a command: history rows and audit events name system:cli. */
export function cliChange(): ChangedBy & { requestId: string } {
  return { actor: CLI_ACTOR, requestId: `cli-${randomUUID()}`, userAgent: 'backplane-cli' };
}

type Settings = Awaited<ReturnType<typeof settingsModule.create>>;

export interface CliServices {
  settings: Settings['api']['service'];
  jobs: JobsServiceDeps;
  audit: ReturnType<typeof createAuditQueries>;
  retention: Awaited<ReturnType<typeof retentionModule.create>>['routeDeps'];
}

/**
 * Every service a command uses, built in this one place the way src/app/modules.ts builds them
 * for the API, so commands run the same validation, history and audit. Nothing is started:
 * no scheduler, no workers, no heartbeat.
 */
export async function withServices<T>(pool: pg.Pool, url: string, config: Config, work: (services: CliServices) => Promise<T>): Promise<T> {
  const audit = await auditModule.create({ pool });
  const { recordAudit } = audit.api;
  const settings = await settingsModule.create({ pool, listener: noNotifications, logger: cliLogger, recordAudit });
  try {
    const jobsCreated: { service?: JobsServiceDeps } = {};
    const retention = await retentionModule.create({
      targets: RETENTION_TARGETS,
      pool,
      connectionString: url,
      settings: retentionSettings(settings.api.reader),
      jobStatus: (db) => retentionJobStatus(jobsCreated.service!, db),
      ensureAuditEventPartitions: () => ensureAuditEventPartitions(pool),
      recordPurge: auditRetentionPurge,
    });
    const notRunHere = () => Promise.reject(new Error('jobs do not run in backplane commands'));
    const jobs = await jobsModule.create({
      pool,
      listener: noNotifications,
      logger: cliLogger,
      registry: new client.Registry(),
      runTask: notRunHere,
      instanceId: 'cli',
      // The jobs of src/app/modules.ts; handlers never run here: commands read and change definitions and queue runs.
      definitions: [...(audit.jobs ?? []), revokeTokensJob(notRunHere), ratelimitCleanupJob, ...(retention.jobs ?? []), ...(config.testJobs ? testJobDefinitions() : [])],
      workers: 0,
      queues: [],
      leaseSeconds: config.jobLeaseSeconds,
      runningInstances: () => undefined,
      recordAudit,
    });
    jobsCreated.service = jobs.api.service;
    return await work({ settings: settings.api.service, jobs: jobs.api.service, audit: createAuditQueries(pool), retention: retention.routeDeps });
  } finally {
    await settings.close?.();
  }
}
