import { randomUUID } from 'node:crypto';
import client from 'prom-client';
import pino from 'pino';
import type { Config } from '../app/config.ts';
import { jobDefinitions } from '../app/jobs.ts';
import { auditRetentionPurge, retentionJobStatus, retentionSettings } from '../app/retention.ts';
import { CLI_ACTOR, createAuditQueries, ensureAuditEventPartitions, recordAuditEvent } from '../modules/audit/index.ts';
import { readRevocationBacklog } from '../modules/identities/index.ts';
import { type JobsServiceDeps, type RecordJobDefinitionChange, createJobsModule } from '../modules/jobs/index.ts';
import { createRetentionModule } from '../modules/retention/index.ts';
import { createSettingsModule } from '../modules/settings/index.ts';
import type { NotificationListener } from '../platform/db/listener.ts';
import type { Queryable } from '../platform/db/pool.ts';
import type pg from 'pg';
import type { RequestInfo } from '../platform/http/route.ts';

/** Logs of the services go to stderr, so stdout stays the command's data (--json). */
export const cliLogger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));

const recordAudit = async (tx: Queryable, event: Parameters<typeof recordAuditEvent>[1]) => void (await recordAuditEvent(tx, event));

/** The audit event `jobs.definition.changed`, as src/app/jobs.ts records it, with the CLI as actor. */
const recordJobChangeAsCli: RecordJobDefinitionChange = async (tx, event) => {
  await recordAuditEvent(tx, {
    actor: CLI_ACTOR,
    action: 'jobs.definition.changed',
    resource: { type: 'job_definition', id: event.job },
    outcome: 'success',
    requestId: event.requestId,
    userAgent: event.userAgent,
    metadata: { before: event.before, after: event.after, reason: event.reason },
  });
};

/**
 * What the services see of a command: history rows name system:cli. The services' Actor type
 * knows only accounts; the audit events themselves are recorded with CLI_ACTOR.
 */
export function cliRequest(): RequestInfo {
  return {
    requestId: `cli-${randomUUID()}`,
    actor: { kind: 'account', id: CLI_ACTOR.id, label: CLI_ACTOR.label, methods: ['cli'] },
    clientAddress: '',
    userAgent: 'backplane-cli',
    header: () => '',
    setHeader: () => undefined,
    setStatus: () => undefined,
  };
}

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

export interface CliServices {
  settings: Awaited<ReturnType<typeof createSettingsModule>>['service'];
  jobs: JobsServiceDeps;
  audit: ReturnType<typeof createAuditQueries>;
  retention: ReturnType<typeof createRetentionModule>['service'];
}

/**
 * Every service a command uses, built in this one place the way src/app/instance.ts builds them
 * for the API, so commands run the same validation, history and audit. Nothing is started:
 * no scheduler, no workers, no heartbeat.
 */
export async function withServices<T>(pool: pg.Pool, url: string, config: Config, work: (services: CliServices) => Promise<T>): Promise<T> {
  const listener = noNotifications;
  const settings = await createSettingsModule({ pool, listener, logger: cliLogger, recordAudit });
  try {
    const retention = createRetentionModule({
      pool,
      connectionString: url,
      settings: retentionSettings(settings.reader),
      jobStatus: () => retentionJobStatus(jobs.service),
      ensureAuditEventPartitions: () => ensureAuditEventPartitions(pool),
      recordPurge: auditRetentionPurge,
    });
    const notRunHere = () => Promise.reject(new Error('jobs do not run in backplane commands'));
    const jobs = createJobsModule({
      pool,
      listener,
      logger: cliLogger,
      registry: new client.Registry(),
      runTask: notRunHere,
      instanceId: 'cli',
      // Handlers never run here: the CLI reads and changes definitions and queues runs; the overview reads backlogs.
      definitions: jobDefinitions(config, { identities: { revokeQueuedTokens: notRunHere, readBacklog: readRevocationBacklog }, retention: retention.job }),
      workers: 0,
      queues: [],
      leaseSeconds: config.jobLeaseSeconds,
      recordDefinitionChange: recordJobChangeAsCli,
    });
    return await work({ settings: settings.service, jobs: jobs.service, audit: createAuditQueries(pool), retention: retention.service });
  } finally {
    settings.close();
  }
}
