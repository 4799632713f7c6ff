import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import pino from 'pino';
import { currentApplication } from '../app/application.ts';
import { loadBuildInfo } from '../app/buildInfo.ts';
import type { Config } from '../app/config.ts';
import { createModules } from '../app/modules.ts';
import type { Platform } from '../app/platform.ts';
import { CLI_ACTOR, createAuditQueries } from '../modules/audit/index.ts';
import type { JobsServiceDeps } from '../modules/jobs/index.ts';
import type { RetentionServiceDeps } from '../modules/retention/index.ts';
import type { SettingsService } from '../modules/settings/index.ts';
import type { ChangedBy } from '../platform/caller.ts';
import type { NotificationListener } from '../platform/db/listener.ts';
import type { InstrumentedPool } from '../platform/db/pool.ts';
import { createRegistry } from '../platform/metrics/registry.ts';

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

export interface CliServices {
  settings: SettingsService;
  jobs: JobsServiceDeps;
  audit: ReturnType<typeof createAuditQueries>;
  retention: RetentionServiceDeps;
}

/** What a command's modules share: its pool, no notifications, no threads (job handlers never run in a command). */
function commandPlatform(pool: pg.Pool, url: string): Platform {
  const notRunHere = () => Promise.reject(new Error('jobs do not run in backplane commands'));
  return {
    instanceId: 'cli',
    directUrl: url,
    startedAt: new Date(),
    build: loadBuildInfo(),
    logger: cliLogger,
    pool: pool as InstrumentedPool,
    rateLimitDecisions: { pool: pool as InstrumentedPool, connections: 1 },
    listener: noNotifications,
    registry: createRegistry('cli'),
    tasks: { runTask: notRunHere, close: async () => undefined } as unknown as Platform['tasks'],
    close: async () => undefined,
  };
}

/**
 * The services a command uses, from the one composition root (src/app/modules.ts) with start-up
 * switched off, so commands run the same validation, history and audit as the API and see every
 * module's jobs and settings. Nothing is started: no scheduler, no workers, no heartbeat.
 */
export async function withServices<T>(pool: pg.Pool, url: string, config: Config, work: (services: CliServices) => Promise<T>): Promise<T> {
  const modules = await createModules(await currentApplication(), config, commandPlatform(pool, url), {
    serving: false,
    only: ['audit', 'settings', 'retention', 'jobs'],
  });
  try {
    return await work({
      settings: modules.api<{ service: SettingsService }>('settings').service,
      jobs: modules.api<{ service: JobsServiceDeps }>('jobs').service,
      audit: createAuditQueries(pool),
      retention: modules.api<{ service: RetentionServiceDeps }>('retention').service,
    });
  } finally {
    await modules.close();
  }
}
