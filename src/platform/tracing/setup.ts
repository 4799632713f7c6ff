import { hostname } from 'node:os';

/** Which kind of thread makes the spans: a resource attribute, so a collector tells them apart. */
export type TracingRole = 'instance' | 'primary' | 'task';

export interface TracingIdentity {
  role: TracingRole;
  /** The instance's id (none for the pod's primary). */
  instanceId?: string | undefined;
}

export interface Tracing {
  /** Sends the spans still buffered; gives up after `timeoutMs` so a hung collector cannot hold a stop. */
  flush(timeoutMs?: number): Promise<void>;
}

const OFF: Tracing = { flush: () => Promise.resolve() };

let started: Promise<Tracing> | undefined;
let enabled = false;

/** True once this thread exports spans: the request frame skips its span work otherwise. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The standard variables that turn tracing on: without an endpoint no SDK is loaded at all. */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/**
 * Starts tracing in this thread once (later calls get the first one's handle), configured by the
 * OTEL_* variables only. Without an endpoint it returns at once and imports nothing.
 */
export function startTracing(identity: TracingIdentity): Promise<Tracing> {
  if (!tracingConfigured()) {
    return Promise.resolve(OFF);
  }
  started ??= (async () => {
    const { loadTracing } = await import('./sdk.ts');
    const tracing = await loadTracing({ ...identity, pod: process.env.POD_NAME ?? process.env.HOSTNAME ?? hostname() });
    enabled = true;
    return tracing;
  })();
  return started;
}

/** Flushes this thread's spans if tracing started; bounded, and never throws. */
export async function flushTracing(timeoutMs = 3_000): Promise<void> {
  if (started) {
    await (await started).flush(timeoutMs).catch(() => undefined);
  }
}
