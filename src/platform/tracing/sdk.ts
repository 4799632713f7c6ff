// Imported only when an OTLP endpoint is configured (setup.ts): tracing off loads none of this.
import { readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { type TextMapPropagator, propagation } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { type Resource, defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { packageRoot } from '../packageRoot.ts';
import { PooledIdGenerator } from './ids.ts';
import { TrustedParentSampler, samplerFromEnv } from './sampler.ts';
import type { Tracing, TracingIdentity } from './setup.ts';
import { statementName } from './statementName.ts';

/** The propagators OTEL_PROPAGATORS names, of those the core package has (b3 and jaeger are not installed). */
export function propagatorsFromEnv(): TextMapPropagator | null {
  const names = (process.env.OTEL_PROPAGATORS ?? 'tracecontext,baggage').split(',').map((name) => name.trim());
  if (names.includes('none')) {
    return null;
  }
  const known: Record<string, () => TextMapPropagator> = {
    tracecontext: () => new W3CTraceContextPropagator(),
    baggage: () => new W3CBaggagePropagator(),
  };
  const propagators = names.flatMap((name) => {
    if (known[name]) {
      return [known[name]()];
    }
    process.emitWarning(`OTEL_PROPAGATORS: "${name}" is not supported; only tracecontext and baggage are`);
    return [];
  });
  return new CompositePropagator({ propagators });
}

/** The OTLP/HTTP exporter of OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL; it reads the endpoint variables itself (exported for bench/system/exportCost.ts). */
export async function exporterFromEnv(): Promise<SpanExporter> {
  const protocol = process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  if (protocol !== 'http/protobuf') {
    process.emitWarning(`OTEL_EXPORTER_OTLP_PROTOCOL: "${protocol}" is not supported; sending http/protobuf`);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/**
 * OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 256 rather than the SDK's 512: a batch is serialized inside
 * the `span.end` that fills it, on the request path (512 spans held the event loop about 5 ms on the
 * bench machine, 256 about 2.6), while each export also pays a fixed cost for its HTTP request:
 * 256 cost a span 16 µs of CPU where 128 cost it 24 (bench/system/exportCost.ts, bench/README.md).
 */
export function exportBatchSize(): number | undefined {
  return process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ? undefined : 256;
}

/** What every span of this thread is from: service and its version, pod, role and instance, then OTEL_RESOURCE_ATTRIBUTES. */
export function tracingResource(identity: TracingIdentity & { pod: string }): Resource {
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return defaultResource()
    .merge(
      resourceFromAttributes({
        'service.name': 'backplane',
        'service.version': version,
        'k8s.pod.name': identity.pod,
        'backplane.role': identity.role,
        ...(identity.instanceId ? { 'service.instance.id': identity.instanceId } : {}),
      }),
    )
    .merge(detectResources({ detectors: [envDetector] }));
}

/**
 * Registers the SDK for this thread: resource (tracingResource), sampler from OTEL_TRACES_SAMPLER
 * that follows a caller's decision only from a trusted peer (sampler.ts), batched OTLP export, W3C
 * propagation, and statement and fetch spans.
 */
export async function loadTracing(identity: TracingIdentity & { pod: string }): Promise<Tracing> {
  const ids = new PooledIdGenerator();
  const provider = new NodeTracerProvider({
    resource: tracingResource(identity),
    idGenerator: ids,
    sampler: new TrustedParentSampler(samplerFromEnv(), ids),
    spanProcessors: [new BatchSpanProcessor(await exporterFromEnv(), { maxExportBatchSize: exportBatchSize() })],
  });
  const propagator = propagatorsFromEnv();
  provider.register({ propagator });
  if (propagator === null) {
    propagation.disable();
  }
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Statements outside a request, job or batch (listener, polling) would each be a trace of their own.
      new PgInstrumentation({
        enhancedDatabaseReporting: false,
        requireParentSpan: true,
        // The stable conventions say db.system.name; db.system too, for collectors and queries not yet moved.
        // The span is named after the statement (its prepared name, or operation and table), not `pg.query:SELECT`.
        requestHook: (span, { query }) => {
          const name = statementName(query.text, query.name);
          span.setAttribute('db.system', 'postgresql');
          span.setAttribute('db.query.summary', name);
          span.updateName(name);
        },
      }),
      // Like statements: a call outside a sampled request or job (one sampled out runs without a span) makes no trace of its own.
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // Outgoing node:http(s) only (the RFC 7009 revocation client): server spans are the request frame's.
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, requireParentforOutgoingSpans: true }),
    ],
  });
  // pg is CommonJS imported from ESM: requiring it once more lets the instrumentation's require hook
  // patch its prototypes, which the already imported copy shares (no loader hook needed in any thread).
  const require = createRequire(import.meta.url);
  require('pg');
  require('pg-pool');
  // Likewise node:http(s), whose patched functions reach ESM named imports (`import { request }`) only once synced.
  require('node:http');
  require('node:https');
  syncBuiltinESMExports();
  return {
    flush: (timeoutMs = 3_000) => Promise.race([provider.forceFlush(), new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())]),
  };
}
