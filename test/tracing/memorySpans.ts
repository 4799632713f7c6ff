import { InMemorySpanExporter, type ReadableSpan, type Sampler, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * An SDK registered in this test process (ava runs each file in a process of its own), keeping
 * every ended span in memory: what runs in-process is traced as it is with an OTLP endpoint.
 * Sampling is the SDK's default (parent based, always on) unless `sampler` is given.
 */
export function recordSpans(sampler?: Sampler): { spans(): ReadableSpan[]; named(name: string): ReadableSpan[]; reset(): void } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], ...(sampler ? { sampler } : {}) });
  provider.register();
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
  };
}
