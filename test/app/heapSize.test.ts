import test from 'ava';
import { totalmem } from 'node:os';
import { instanceHeapLimitMb } from '../../src/app/heapSize.ts';

const MB = 1024 * 1024;
const base = { instances: 2, execArgv: [], nodeOptions: undefined };

test('each instance gets its share of the container memory limit, not a heap sized as if it were alone', (t) => {
  const limit = Math.min(1024 * MB, totalmem() - 1);
  const mb = instanceHeapLimitMb({ ...base, limitBytes: limit })!;
  t.true(mb >= 64);
  // The instances' heaps together stay well inside the limit, leaving room for the primary and native memory.
  t.true(mb * 2 * MB <= limit * 0.75);
  t.true(instanceHeapLimitMb({ ...base, instances: 4, limitBytes: limit })! < mb);
});

test("no limit, or the operator's own --max-old-space-size, leaves Node's default", (t) => {
  t.is(instanceHeapLimitMb({ ...base, limitBytes: undefined }), undefined);
  t.is(instanceHeapLimitMb({ ...base, limitBytes: 0 }), undefined);
  t.is(instanceHeapLimitMb({ ...base, limitBytes: 2 ** 64 }), undefined);
  const limit = Math.min(1024 * MB, totalmem() - 1);
  t.is(instanceHeapLimitMb({ ...base, limitBytes: limit, nodeOptions: '--enable-source-maps --max-old-space-size=300' }), undefined);
  t.is(instanceHeapLimitMb({ ...base, limitBytes: limit, execArgv: ['--max_old_space_size=300'] }), undefined);
});
