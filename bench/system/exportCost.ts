// bench/system/exportCost.ts: what the SDK's OTLP/protobuf export costs a span, by batch size
// (issue 34). A child process (the exporter, its CPU read with process.cpuUsage) sends ready-made
// batches of server spans shaped as the request frame makes them to a loopback sink in this
// process, through the same exporter an instance builds (exporterFromEnv), as the
// BatchSpanProcessor calls it. Per batch size: CPU per span (serialization, the HTTP request,
// its answer) and the synchronous part, which a full batch adds to the `span.end` that filled it
// on the request path. Two paces: back to back, and one batch every BENCH_GAP_MS (200: an
// instance at 6,000 requests a second sampled at 10% fills a batch of 128 about that often).
// Sizes take turns, round after round. BENCH_BATCH_SIZES=128,256,512 BENCH_BATCHES=30 BENCH_ROUNDS=3
// node --import tsx bench/system/exportCost.ts
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type * as Sdk from '../../src/platform/tracing/sdk.ts';
import { buildService, median, root, writeResults } from '../support/harness.ts';
import { startOtlpSink } from '../support/otlpSink.ts';

const sizes = (process.env.BENCH_BATCH_SIZES ?? '128,256,512').split(',').map(Number);
const batches = Number(process.env.BENCH_BATCHES ?? '30');
const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
const gapMs = Number(process.env.BENCH_GAP_MS ?? '200');
// Back to back, then at the gap's pace (BENCH_GAP_MS=0 leaves the paced run out).
const gaps = gapMs > 0 ? [0, gapMs] : [0];

interface Reading {
  size: number;
  gapMs: number;
  cpuUsPerSpan: number;
  syncMsPerBatch: number;
}

if (process.env.EXPORT_COST_CHILD) {
  await child();
} else {
  await parent();
}

async function child(): Promise<void> {
  const { exporterFromEnv, tracingResource } = (await import(join(root, 'dist/platform/tracing/sdk.js'))) as typeof Sdk;
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { SpanKind } = await import('@opentelemetry/api');
  // The resource an instance's spans carry and the attributes its server span records (serverSpan.ts): the bytes on the wire are theirs.
  const resource = tracingResource({ role: 'instance', instanceId: 'bench', pod: 'bench-pod' });
  const memory = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer('backplane');
  for (let index = 0; index < Math.max(...sizes); index += 1) {
    const span = tracer.startSpan('GET', { kind: SpanKind.SERVER });
    span.setAttributes({ 'http.request.method': 'GET', 'url.scheme': 'http', 'network.protocol.version': '1.1' });
    span.updateName('GET /readyz');
    span.setAttributes({ 'http.route': '/readyz', 'http.response.status_code': 200 });
    span.end();
  }
  const spans = memory.getFinishedSpans();
  const exporter = await exporterFromEnv();
  let syncMs = 0;
  const exportBatch = (batch: ReadableSpan[]) =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      exporter.export(batch, (result) => (result.code === 0 ? resolve() : reject(result.error ?? new Error('export failed'))));
      syncMs += performance.now() - started;
    });
  // Warm-up: the exporter's connection open, its code compiled.
  for (let index = 0; index < 20; index += 1) {
    await exportBatch(spans.slice(0, sizes[0]));
  }
  const readings: Reading[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const size of round % 2 ? [...sizes].reverse() : sizes) {
      for (const gap of gaps) {
        const batch = spans.slice(0, size);
        syncMs = 0;
        let cpuUs = 0;
        for (let index = 0; index < batches; index += 1) {
          const before = process.cpuUsage();
          await exportBatch(batch);
          const used = process.cpuUsage(before);
          cpuUs += used.user + used.system;
          if (gap) {
            await new Promise((resolve) => setTimeout(resolve, gap));
          }
        }
        readings.push({ size, gapMs: gap, cpuUsPerSpan: cpuUs / batches / size, syncMsPerBatch: syncMs / batches });
      }
    }
  }
  await exporter.shutdown();
  process.stdout.write(JSON.stringify(readings));
}

async function parent(): Promise<void> {
  buildService();
  const sink = await startOtlpSink();
  let output = '';
  try {
    const exporter = spawn(process.execPath, ['--import', 'tsx', import.meta.filename], {
      cwd: root,
      env: {
        ...process.env,
        EXPORT_COST_CHILD: '1',
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    exporter.stdout.on('data', (chunk: Buffer) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => exporter.once('exit', resolve));
    if (code !== 0) {
      throw new Error(`the exporter process exited with ${code}`);
    }
  } finally {
    await sink.close();
  }
  const readings = JSON.parse(output) as Reading[];
  const rows = sizes.flatMap((size) =>
    gaps.map((gap) => {
      const mine = readings.filter((reading) => reading.size === size && reading.gapMs === gap);
      return {
        size,
        pace: gap ? `one batch every ${gap} ms` : 'back to back',
        cpuUsPerSpan: Number(median(mine.map((reading) => reading.cpuUsPerSpan)).toFixed(1)),
        syncMsPerBatch: Number(median(mine.map((reading) => reading.syncMsPerBatch)).toFixed(2)),
      };
    }),
  );
  for (const row of rows) {
    console.log(`batch of ${row.size}, ${row.pace}: ${row.cpuUsPerSpan} µs of CPU a span, ${row.syncMsPerBatch} ms synchronous a batch`);
  }
  console.log(`written: ${writeResults('export-cost', { batches, rounds, rows, received: sink.received() })}`);
}
