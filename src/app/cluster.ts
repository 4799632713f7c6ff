import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import client from 'prom-client';
import { migrateUp } from '../platform/db/migrations.ts';
import { waitForSchema } from '../platform/db/schemaWait.ts';
import { createPool } from '../platform/db/pool.ts';
import { createLogger } from '../platform/logging/logger.ts';
import { createPrimaryRegistry } from '../platform/metrics/registry.ts';
import { labelSets, zeroCounter } from '../platform/metrics/zero.ts';
import { flushTracing, startTracing } from '../platform/tracing/setup.ts';
import { tracer } from '../platform/tracing/tracer.ts';
import type { Config } from './config.ts';
import { connectionBudget } from './connectionBudget.ts';
import { contextFrameFlag } from './contextFrame.ts';
import { instanceHeapLimitMb } from './heapSize.ts';
import { type DatabaseHandle, checkServerVersion, openDatabase } from './database.ts';
import { releaseDatabaseOnSignal } from './databaseSignals.ts';
import { openSecretBox } from './encryptionKey.ts';
import { openStoredSigningKey } from './signingKeys.ts';
import { checkListenAddress } from './listenAddress.ts';
import { watchLiveness } from './liveness.ts';
import { DRAIN_MESSAGE, LISTENER_CLOSED_MESSAGE, STOPPED_ACCEPTING_MESSAGE } from './messages.ts';
import { serveClusterMetrics } from './metricsServer.ts';
import { currentApplication } from './application.ts';
import { startPrimaryWork } from './primaryWork.ts';

const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that lived this long is considered healthy again: its backoff resets. */
const STABLE_AFTER_MS = 30_000;

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  crashes: number;
  /** Set when the primary killed it for not answering its liveness ping. */
  unresponsive: boolean;
}

function supervisionMetrics() {
  const registry = createPrimaryRegistry();
  const instanceRestarts = new client.Counter({
    name: 'backplane_instance_restarts_total',
    help: 'Instances the primary forked again: reason="exited" (crashed or stopped), "unresponsive" (killed after missing liveness pings)',
    labelNames: ['reason'],
    registers: [registry],
  });
  zeroCounter(instanceRestarts, labelSets({ reason: ['exited', 'unresponsive'] }));
  return {
    registry,
    databaseRestarts: new client.Counter({
      name: 'backplane_embedded_database_restarts_total',
      help: 'Times the primary started the embedded PostgreSQL again after its postmaster died',
      registers: [registry],
    }),
    instanceRestarts,
  };
}

async function migrate(database: DatabaseHandle, logger: Logger, config: Config): Promise<void> {
  // The migrations' session advisory lock must stay on one server connection: never through a transaction pooler.
  const pool = createPool({ connectionString: database.directUrl, max: 2, applicationName: 'backplane-migrate' });
  try {
    await checkServerVersion(pool, database.description);
    if (config.migrations === 'wait') {
      await waitForSchema(pool, (pending) =>
        logger.warn(
          { pending },
          `waiting for ${pending.length} migration(s) this release needs: run \`backplane migrate up\` (the migrate Job); instances start once they are applied`,
        ),
      );
    }
    const applied = config.migrations === 'apply' ? await migrateUp(pool) : [];
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is current');
    // Seals a key the previous release stored in clear; a wrong APP_ENCRYPTION_KEY stops here in one line.
    await openStoredSigningKey(pool, config);
  } finally {
    await pool.end();
  }
}

/**
 * The primary: opens the database (embedded by default), migrates, forks the instances, restarts
 * a crashed one with backoff, serves metrics, and drains everything on SIGTERM, SIGINT or SIGHUP.
 */
export async function runPrimary(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, { role: 'primary' });
  await startTracing({ role: 'primary' });
  // Fails fast on a bad key, and creates the development key once before instances race for it.
  openSecretBox(config);
  // Every setting an instance would trip over is refused here, before anything starts.
  await checkListenAddress(config.host, config.port, 'PORT');
  if (config.metricsPort !== 0) {
    await checkListenAddress(config.host, config.metricsPort, 'APP_METRICS_PORT');
  }
  const metrics = supervisionMetrics();
  const opening = openDatabase(config, logger);
  // Until the drain below takes the signals over, a signal stops the database this primary owns and exits.
  const stopHandlingSignals = releaseDatabaseOnSignal(opening);
  const database = await opening;
  logger.info(`using ${database.description}`);
  if (database.ownership) {
    logger.warn(`the embedded PostgreSQL was running already: ${database.ownership}`);
  }
  // A start that fails (a migration that does not apply) leaves no database running behind it.
  const stopDatabaseAndThrow = async (error: unknown): Promise<never> => {
    await database.release().catch((stopError: unknown) => logger.error({ err: stopError }, 'could not stop the embedded PostgreSQL'));
    throw error;
  };
  const budget = connectionBudget(config);
  logger.info(
    { connections: budget, pooling: config.databasePooling },
    `each instance opens at most ${budget.perInstance} database connections (${budget.directPerInstance} of them direct)` +
      `${budget.perPod ? `, the primary ${budget.perPod} for the pod's rate-limit decisions` : ''}; ${config.instances} instances: ${budget.perProcess}`,
  );
  // A trace of its own: the start-up's statements (and a slow migration) show in the collector.
  await tracer.startActiveSpan('migrate', (span) => migrate(database, logger, config).finally(() => span.end())).catch(stopDatabaseAndThrow);
  // Every module's work in the primary (the pod's rate-limit decisions), before the instances it serves.
  const primaryWork = await currentApplication()
    .then((application) => startPrimaryWork(application, { config, logger, databaseUrl: database.url, registry: metrics.registry }))
    .catch(stopDatabaseAndThrow);
  database.supervise({
    died: () => logger.error('embedded PostgreSQL died; restarting it'),
    restarting: (attempt, delayMs, error) =>
      logger[error ? 'error' : 'warn'](
        { attempt, restart_in_ms: delayMs, err: error },
        error ? 'embedded PostgreSQL did not start; trying again' : 'embedded PostgreSQL restarting',
      ),
    restarted: (attempt) => {
      metrics.databaseRestarts.inc();
      logger.warn({ attempt }, 'embedded PostgreSQL restarted');
    },
    tookOver: (previousOwner) =>
      logger.warn({ previous_owner: previousOwner }, 'the process that owned the embedded PostgreSQL has exited: this primary owns it now'),
  });

  let shuttingDown = false;
  let announced = false;
  let metricsServer: Server | undefined;
  const listening = new Set<number>();
  const slots: Slot[] = Array.from({ length: config.instances }, (_v, index) => ({ index, worker: undefined, startedAt: 0, crashes: 0, unresponsive: false }));
  // Workers still accepting on the port during a shutdown: the listener closes with the last one.
  const accepting = new Set<Worker>();
  const liveness = watchLiveness(config.instanceLivenessMs, (worker, silentMs) => {
    const slot = slots.find((s) => s.worker === worker);
    if (!slot || shuttingDown) {
      return;
    }
    slot.unresponsive = true;
    logger.error({ worker: slot.index + 1, pid: worker.process.pid, silent_ms: Math.round(silentMs) }, 'instance did not answer the liveness ping; killing it');
    worker.process.kill('SIGKILL');
  });

  let listenerClosed = false;
  const reportListenerClosed = () => {
    if (shuttingDown && accepting.size === 0 && !listenerClosed) {
      listenerClosed = true;
      for (const slot of slots) {
        if (slot.worker?.isConnected()) {
          slot.worker.send(LISTENER_CLOSED_MESSAGE, () => undefined);
        }
      }
    }
  };

  const fork = (slot: Slot) => {
    slot.startedAt = Date.now();
    slot.unresponsive = false;
    const worker = cluster.fork({
      DATABASE_URL: database.url,
      // The URL above is read already (from the file, with PGPASSWORD): both set would stop the instance.
      DATABASE_URL_FILE: '',
      PORT: String(config.port),
      BACKPLANE_WORKER_SLOT: String(slot.index + 1),
    });
    slot.worker = worker;
    liveness.watch(worker);
    primaryWork.serve(worker);
    listening.delete(slot.index);
    worker.on('listening', () => {
      listening.add(slot.index);
      if (!announced && listening.size === slots.length) {
        announced = true;
        announce(config, logger);
      }
    });
    worker.on('message', (message) => {
      if (message !== STOPPED_ACCEPTING_MESSAGE) {
        return;
      }
      // Outside a shutdown the other instances keep the port open: this one may close its connections now.
      if (!shuttingDown) {
        worker.send(LISTENER_CLOSED_MESSAGE, () => undefined);
        return;
      }
      accepting.delete(worker);
      reportListenerClosed();
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    accepting.delete(worker);
    reportListenerClosed();
    const slot = slots.find((s) => s.worker === worker);
    if (!slot || shuttingDown) {
      return;
    }
    slot.worker = undefined;
    slot.crashes = Date.now() - slot.startedAt > STABLE_AFTER_MS ? 1 : slot.crashes + 1;
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (slot.crashes - 1));
    const reason = slot.unresponsive ? 'unresponsive' : 'exited';
    metrics.instanceRestarts.inc({ reason });
    logger.error({ worker: slot.index + 1, code, signal, reason, restart_in_ms: delay }, 'instance exited; restarting');
    setTimeout(() => {
      if (!shuttingDown) {
        fork(slot);
      }
    }, delay);
  });

  if (config.metricsPort !== 0) {
    metricsServer = await serveClusterMetrics(config.metricsPort, config.host, metrics.registry);
    logger.info(`metrics on http://${config.host}:${config.metricsPort}/metrics`);
  }
  const heapMb = instanceHeapLimitMb({
    limitBytes: process.constrainedMemory?.(),
    instances: config.instances,
    execArgv: process.execArgv,
    nodeOptions: config.nodeOptions,
  });
  if (heapMb) {
    logger.info({ heapMb, instances: config.instances }, 'each instance heap sized from the container memory limit');
  }
  const contextFrame = contextFrameFlag({ allowedFlags: process.allowedNodeEnvironmentFlags, execArgv: process.execArgv, nodeOptions: config.nodeOptions });
  const added = [...(heapMb ? [`--max-old-space-size=${heapMb}`] : []), ...(contextFrame ? [contextFrame] : [])];
  if (added.length > 0) {
    cluster.setupPrimary({ execArgv: [...process.execArgv, ...added] });
  }
  slots.forEach(fork);

  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      return;
    }
    shuttingDown = true;
    liveness.stop();
    logger.info({ signal }, 'draining instances');
    const workers = slots.map((slot) => slot.worker).filter((worker): worker is Worker => worker !== undefined);
    const exits = workers.map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers) {
      if (worker.isConnected()) {
        accepting.add(worker);
        worker.send(DRAIN_MESSAGE, () => undefined);
      }
    }
    const deadline = setTimeout(() => {
      logger.warn('instances did not stop in time; killing them');
      workers.forEach((worker) => worker.process.kill('SIGKILL'));
    }, config.drainTimeoutMs + 5_000);
    await Promise.all(exits);
    clearTimeout(deadline);
    await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
    await primaryWork.close();
    await database.release();
    logger.info('stopped');
    await flushTracing();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // A closed terminal's SIGHUP would otherwise end the primary alone and leave its database running.
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  stopHandlingSignals();
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
