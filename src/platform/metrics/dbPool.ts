import client from 'prom-client';
import type { InstrumentedPool } from '../db/pool.ts';

/** Pool gauges and counters, read from the pool when scraped. */
export function registerPoolMetrics(registry: client.Registry, pool: InstrumentedPool): void {
  new client.Gauge({
    name: 'backplane_db_pool_connections',
    help: 'Connections of the instance pool by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  new client.Gauge({
    name: 'backplane_db_pool_max_connections',
    help: 'Size limit of the instance pool',
    registers: [registry],
    collect() {
      this.set(pool.options.max ?? 10);
    },
  });
  const counter = (name: string, help: string, read: () => number) =>
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter('backplane_db_pool_acquires_total', 'Connection checkouts', () => pool.stats.acquires);
  counter('backplane_db_pool_empty_acquires_total', 'Checkouts that found no idle connection', () => pool.stats.emptyAcquires);
  counter('backplane_db_pool_canceled_acquires_total', 'Checkouts that timed out or failed', () => pool.stats.canceledAcquires);
  counter('backplane_db_pool_acquire_seconds_total', 'Time spent waiting for checkouts', () => pool.stats.acquireMsTotal / 1000);
}
