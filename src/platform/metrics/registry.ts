import client from 'prom-client';

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
  const duration = new client.Histogram({
    name: 'backplane_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // Bound children are cached: resolving labels per request cost more than the observation.
  const children = new Map<string, client.Histogram.Internal<string>>();
  return {
    observe(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let child = children.get(key);
      if (!child) {
        child = duration.labels({ method, route, status: String(status) });
        children.set(key, child);
      }
      child.observe(seconds);
    },
  };
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
