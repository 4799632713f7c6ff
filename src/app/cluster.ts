import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { ensureAuditEventPartitions } from '../modules/audit/index.ts';
import { migrateUp } from '../platform/db/migrations.ts';
import { createPool } from '../platform/db/pool.ts';
import { createLogger } from '../platform/logging/logger.ts';
import type { Config } from './config.ts';
import { openDatabase } from './database.ts';
import { openSecretBox } from './encryptionKey.ts';
import { DRAIN_MESSAGE } from './messages.ts';
import { serveClusterMetrics } from './metricsServer.ts';

const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that lived this long is considered healthy again: its backoff resets. */
const STABLE_AFTER_MS = 30_000;

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  crashes: number;
}

async function migrate(url: string, logger: Logger): Promise<void> {
  const pool = createPool({ connectionString: url, max: 2, applicationName: 'backplane-migrate' });
  try {
    const applied = await migrateUp(pool);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is current');
    // The retention job keeps them ahead too; starting here covers a job disabled or not yet run.
    try {
      const created = await ensureAuditEventPartitions(pool);
      if (created > 0) {
        logger.info({ created }, 'audit event partitions created ahead');
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not create audit event partitions ahead; new months go to the default partition until the retention job runs');
    }
  } finally {
    await pool.end();
  }
}

/**
 * The primary: opens the database (embedded by default), migrates, forks the instances, restarts
 * a crashed one with backoff, serves metrics, and drains everything on SIGTERM or SIGINT.
 */
export async function runPrimary(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, { role: 'primary' });
  // Fails fast on a bad key, and creates the development key once before instances race for it.
  openSecretBox(config);
  const database = await openDatabase(config, logger);
  logger.info(`using ${database.description}`);
  await migrate(database.url, logger);

  let shuttingDown = false;
  let announced = false;
  let metricsServer: Server | undefined;
  const listening = new Set<number>();
  const slots: Slot[] = Array.from({ length: config.instances }, (_v, index) => ({ index, worker: undefined, startedAt: 0, crashes: 0 }));

  const fork = (slot: Slot) => {
    slot.startedAt = Date.now();
    slot.worker = cluster.fork({
      DATABASE_URL: database.url,
      PORT: String(config.port),
      BACKPLANE_WORKER_SLOT: String(slot.index + 1),
    });
    listening.delete(slot.index);
    slot.worker.on('listening', () => {
      listening.add(slot.index);
      if (!announced && listening.size === slots.length) {
        announced = true;
        announce(config, logger);
      }
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.find((s) => s.worker === worker);
    if (!slot || shuttingDown) {
      return;
    }
    slot.worker = undefined;
    slot.crashes = Date.now() - slot.startedAt > STABLE_AFTER_MS ? 1 : slot.crashes + 1;
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (slot.crashes - 1));
    logger.error({ worker: slot.index + 1, code, signal, restart_in_ms: delay }, 'instance exited; restarting');
    setTimeout(() => {
      if (!shuttingDown) {
        fork(slot);
      }
    }, delay);
  });

  if (config.metricsPort !== 0) {
    metricsServer = await serveClusterMetrics(config.metricsPort, config.host);
    logger.info(`metrics on http://${config.host}:${config.metricsPort}/metrics`);
  }
  slots.forEach(fork);

  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      return;
    }
    shuttingDown = true;
    logger.info({ signal }, 'draining instances');
    const workers = slots.map((slot) => slot.worker).filter((worker): worker is Worker => worker !== undefined);
    const exits = workers.map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers) {
      if (worker.isConnected()) {
        worker.send(DRAIN_MESSAGE);
      }
    }
    const deadline = setTimeout(() => {
      logger.warn('instances did not stop in time; killing them');
      workers.forEach((worker) => worker.process.kill('SIGKILL'));
    }, config.drainTimeoutMs + 5_000);
    await Promise.all(exits);
    clearTimeout(deadline);
    await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
    await database.release();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function announce(config: Config, logger: Logger): void {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  logger.info(
    {
      url: `http://${host}:${config.port}`,
      instances: config.instances,
      next: [
        `npx backplane accounts create --email you@example.com --role platform_admin`,
        `export TOKEN=$(npx backplane token issue --email you@example.com)`,
        `curl -H "Authorization: Bearer $TOKEN" http://${host}:${config.port}/ops/system`,
      ],
    },
    `ready: ${config.instances} instances listening on http://${host}:${config.port}`,
  );
  if (process.stderr.isTTY) {
    const metrics = config.metricsPort ? `\n  metrics: http://${host}:${config.metricsPort}/metrics` : '';
    process.stderr.write(
      `\nBackplane is ready: ${config.instances} instances on http://${host}:${config.port}${metrics}\n` +
        `  get a token:\n` +
        `    npx backplane accounts create --email you@example.com --role platform_admin\n` +
        `    export TOKEN=$(npx backplane token issue --email you@example.com)\n` +
        `    curl -H "Authorization: Bearer $TOKEN" http://${host}:${config.port}/ops/system\n\n`,
    );
  }
}
