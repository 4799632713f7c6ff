import test from 'ava';
import { propagatorsFromEnv } from '../../src/platform/tracing/sdk.ts';

// OTEL_PROPAGATORS picks the W3C propagators of @opentelemetry/core; one test process, so serial.
const withPropagators = (value: string | undefined) => {
  if (value === undefined) {
    delete process.env.OTEL_PROPAGATORS;
  } else {
    process.env.OTEL_PROPAGATORS = value;
  }
  return propagatorsFromEnv();
};

test.serial('unset: trace context and baggage, as the specification says', (t) => {
  t.deepEqual(withPropagators(undefined)?.fields().sort(), ['baggage', 'traceparent', 'tracestate']);
});

test.serial('tracecontext alone: no baggage header', (t) => {
  t.deepEqual(withPropagators('tracecontext')?.fields().sort(), ['traceparent', 'tracestate']);
});

test.serial('none: nothing is propagated', (t) => {
  t.is(withPropagators('none'), null);
});

test.serial('a propagator that is not installed is left out with a warning, the others kept', (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  t.deepEqual(withPropagators('b3, tracecontext')?.fields().sort(), ['traceparent', 'tracestate']);
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      process.off('warning', onWarning);
      t.true(warnings.some((message) => message.includes('b3')));
      resolve();
    }),
  );
});
