import type { Logger } from 'pino';
import { withDatabaseDeadline } from '../../platform/db/deadline.ts';
import { listMigrationFiles, migrationStatus } from '../../platform/db/migrations.ts';
import type { InstrumentedPool } from '../../platform/db/pool.ts';
import type { Registry } from '../../platform/metrics/registry.ts';
import { definePart } from '../../platform/module.ts';
import type { ReadinessCheck } from '../../platform/readiness.ts';
import { registerRuntimeMetrics } from './metrics.ts';
import { createReadiness } from './readiness.ts';
import { healthRoutes } from './routes.ts';
import { createRuntimeSampler } from './runtimeStats.ts';
import { type InstanceIdentity, createDatabaseProbe } from './system.ts';

export { createReadiness, type Readiness, type ReadinessCheck } from './readiness.ts';

/** The database probes of /readyz and /ops/system give up after 2 s (their own bound) of waiting. */
const PROBE_DEADLINE_MS = 2_000;

export interface HealthNeeds {
  pool: InstrumentedPool;
  logger: Logger;
  registry: Registry;
  instance: InstanceIdentity;
  /** Every other module's readiness checks, reported after the database's own. */
  checks: ReadinessCheck[];
  /** What GET /ops/system reports of the jobs this instance runs. */
  jobs: { workers: number; queues: string[] };
}

/** Probes and the instance's own description: /livez, /readyz, GET /ops/system and the runtime metrics. */
export const healthModule = definePart({
  name: 'health',
  routes: healthRoutes,
  statuses: {},
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.system.read': 'Read the system report of an instance (pool, runtime, migrations, readiness)' },
  create(needs: HealthNeeds) {
    const runtime = createRuntimeSampler();
    registerRuntimeMetrics(needs.registry, runtime);
    const readiness = createReadiness(
      [
        // Bounded like a request, so a frozen database costs a probe its connection, not one held per probe until the thaw.
        {
          name: 'database',
          failure: 'the database did not answer',
          run: () => withDatabaseDeadline(PROBE_DEADLINE_MS, async () => void (await needs.pool.query('select 1'))),
        },
        ...needs.checks,
      ],
      { onFailure: (name, error) => needs.logger.warn({ check: name, err: error }, 'readiness check failed') },
    );
    const migrationFiles = listMigrationFiles();
    const system = {
      instance: needs.instance,
      pool: needs.pool,
      readiness,
      runtime,
      jobs: needs.jobs,
      latestMigration: Math.max(0, ...migrationFiles.map((file) => file.version)),
      readMigrations: () => withDatabaseDeadline(PROBE_DEADLINE_MS, () => migrationStatus(needs.pool, migrationFiles)),
    };
    return {
      api: { readiness },
      routeDeps: { ...system, probe: createDatabaseProbe(system) },
      close: () => runtime.stop(),
    };
  },
});
