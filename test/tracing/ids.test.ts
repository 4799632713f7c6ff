import test from 'ava';
import { PooledIdGenerator } from '../../src/platform/tracing/ids.ts';
import { exportBatchSize } from '../../src/platform/tracing/sdk.ts';

test('trace and span ids are lowercase hex of W3C length, never all zero, and not repeated across pool refills', (t) => {
  const ids = new PooledIdGenerator();
  const traceIds = new Set<string>();
  const spanIds = new Set<string>();
  // 2,000 requests' ids draw the 4 KiB pool about a dozen times over.
  for (let index = 0; index < 2_000; index += 1) {
    const traceId = ids.generateTraceId();
    const spanId = ids.generateSpanId();
    t.regex(traceId, /^[0-9a-f]{32}$/);
    t.regex(spanId, /^[0-9a-f]{16}$/);
    t.not(traceId, '0'.repeat(32));
    t.not(spanId, '0'.repeat(16));
    traceIds.add(traceId);
    spanIds.add(spanId);
  }
  t.is(traceIds.size, 2_000);
  t.is(spanIds.size, 2_000);
});

test('two generators do not hand out the same ids (each draws its own random pool)', (t) => {
  const [one, other] = [new PooledIdGenerator(), new PooledIdGenerator()];
  t.not(one.generateTraceId(), other.generateTraceId());
});

test('spans are exported in batches of 256 unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE says otherwise', (t) => {
  const before = process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE;
  try {
    delete process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE;
    t.is(exportBatchSize(), 256);
    // Set: the SDK reads the variable itself (undefined leaves the option to it).
    process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = '512';
    t.is(exportBatchSize(), undefined);
  } finally {
    if (before === undefined) {
      delete process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE;
    } else {
      process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = before;
    }
  }
});
