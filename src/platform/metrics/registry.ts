import client from 'prom-client';
import { RequestDurations } from './requestDurations.ts';

export type Registry = client.Registry;

/**
 * One registry per instance, labelled with its stable worker slot (not the random instance id,
 * which would churn series on every restart) and role="instance" (the pod's primary says
 * role="primary"). Holds Node's default metrics: heap, GC, event loop.
 */
export function createRegistry(workerSlot: string): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role: 'instance', worker: workerSlot });
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  // prom-client leaves the start time out of the cluster's aggregated scrape; each instance's is kept here.
  registry.removeSingleMetric('process_start_time_seconds');
  const started = Math.round(Date.now() / 1000 - process.uptime());
  new client.Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers: [registry],
    aggregator: 'first',
    collect() {
      this.set(started);
    },
  });
  return registry;
}

export interface HttpMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function createHttpMetrics(registry: client.Registry): HttpMetrics {
  return new RequestDurations(registry);
}

/**
 * The pod's primary's registry: its own process_* and nodejs_* series labelled role="primary" (it
 * decides the pod's rate limits and restarts instances, so its event loop is watched too).
 */
export function createPrimaryRegistry(): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role: 'primary' });
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  return registry;
}
