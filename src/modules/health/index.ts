import { withDatabaseDeadline } from '../../platform/db/deadline.ts';
import { listMigrationFiles, migrationStatus } from '../../platform/db/migrations.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { jobsModule } from '../jobs/index.ts';
import { registerRuntimeMetrics } from './metrics.ts';
import { eventLoopCheck, poolCheck } from './instanceChecks.ts';
import { createReadiness } from './readiness.ts';
import { healthRoutes } from './routes.ts';
import { createRuntimeSampler } from './runtimeStats.ts';
import { createDatabaseProbe } from './system.ts';

export { createReadiness, type Readiness, type ReadinessCheck } from './readiness.ts';

/** The database probes of /readyz and /ops/system give up after 2 s (their own bound) of waiting. */
const PROBE_DEADLINE_MS = 2_000;

/** APP_READINESS_REQUIRES_DATABASE=1: the database check fails /readyz too (ADR 0123); by default it is listed only. */
export type HealthContext = BackplaneContext<{ readinessRequiresDatabase?: boolean }>;

/** Probes and the instance's own description: /livez, /readyz, GET /ops/system and the runtime metrics. */
export const healthModule = defineModule({
  name: 'health',
  needs: ['jobs'],
  routes: healthRoutes,
  statuses: {},
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.system.read': 'Read the system report of an instance (pool, runtime, migrations, readiness)' },
  create(context: HealthContext) {
    const { pool, logger, registry } = context;
    const runtime = createRuntimeSampler();
    registerRuntimeMetrics(registry, runtime);
    const eventLoop = eventLoopCheck();
    const readiness = createReadiness(
      [
        // Bounded like a request, so a frozen database costs a probe its connection, not one held per probe until the thaw.
        {
          name: 'database',
          failure: 'the database did not answer',
          run: () => withDatabaseDeadline(PROBE_DEADLINE_MS, async () => void (await pool.query('select 1'))),
          // Shared by every pod: failing readiness on it would empty the Service when operators need it most (ADR 0123).
          optional: context.config.readinessRequiresDatabase !== true,
        },
        eventLoop,
        poolCheck(pool),
        // Every other module's readiness checks, after the database's own.
        ...context.collected.readiness(),
      ],
      { onFailure: (name, error) => logger.warn({ check: name, err: error }, 'readiness check failed') },
    );
    const migrationFiles = listMigrationFiles();
    const system = {
      instance: { id: context.instanceId, ...context.build },
      pool,
      readiness,
      runtime,
      jobs: context.use(jobsModule).workerInfo,
      latestMigration: Math.max(0, ...migrationFiles.map((file) => file.version)),
      readMigrations: () => withDatabaseDeadline(PROBE_DEADLINE_MS, () => migrationStatus(pool, migrationFiles)),
    };
    return {
      api: { readiness },
      routeDeps: { ...system, probe: createDatabaseProbe(system) },
      // A draining instance reports not ready at once, so the load balancer stops sending it requests.
      drain: async () => readiness.startDraining(),
      close: () => {
        runtime.stop();
        eventLoop.stop();
      },
    };
  },
});
