import client from 'prom-client';
import type { RuntimeSampler } from './runtimeStats.ts';

/** The /ops/system GC figures as series that exist from the start, before the first collection. */
export function registerRuntimeMetrics(registry: client.Registry, runtime: RuntimeSampler): void {
  new client.Counter({
    name: 'backplane_runtime_gc_total',
    help: 'Garbage collections observed since the instance started',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(runtime.gc().count);
    },
  });
  new client.Gauge({
    name: 'backplane_runtime_last_gc_pause_seconds',
    help: 'Duration of the last garbage collection',
    registers: [registry],
    collect() {
      this.set(runtime.gc().lastPauseMs / 1000);
    },
  });
}
