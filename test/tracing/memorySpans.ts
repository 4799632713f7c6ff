import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * An SDK registered in this test process (ava runs each file in a process of its own), keeping
 * every ended span in memory: what runs in-process is traced as it is with an OTLP endpoint.
 */
export function recordSpans(): { spans(): ReadableSpan[]; named(name: string): ReadableSpan[]; reset(): void } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
  };
}
