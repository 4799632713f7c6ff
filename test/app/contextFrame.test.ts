import test from 'ava';
import { CONTEXT_FRAME_FLAG, contextFrameFlag } from '../../src/app/contextFrame.ts';

const node22 = new Set(['--max-old-space-size', CONTEXT_FRAME_FLAG]);
const base = { allowedFlags: node22, execArgv: [], nodeOptions: undefined };

test('on Node 22 the instances get the AsyncLocalStorage of Node 24: the flag is added', (t) => {
  t.is(contextFrameFlag(base), CONTEXT_FRAME_FLAG);
  t.is(contextFrameFlag({ ...base, execArgv: ['--enable-source-maps'], nodeOptions: '--max-old-space-size=300' }), CONTEXT_FRAME_FLAG);
});

test('where Node has no such flag (20, or 24 and later with the frame on already) nothing is added', (t) => {
  t.is(contextFrameFlag({ ...base, allowedFlags: new Set(['--max-old-space-size']) }), undefined);
  t.is(contextFrameFlag({ ...base, allowedFlags: new Set(['--async-context-frame', '--no-async-context-frame']) }), undefined);
});

test("the operator's own choice stands, in the primary's options or in NODE_OPTIONS", (t) => {
  t.is(contextFrameFlag({ ...base, nodeOptions: '--no-experimental-async-context-frame' }), undefined);
  t.is(contextFrameFlag({ ...base, execArgv: ['--no-experimental-async-context-frame'] }), undefined);
  t.is(contextFrameFlag({ ...base, execArgv: [CONTEXT_FRAME_FLAG] }), undefined);
});

test('this runtime answers as its major says', (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  const flag = contextFrameFlag({ allowedFlags: process.allowedNodeEnvironmentFlags, execArgv: [], nodeOptions: undefined });
  // 22.7 and later have the flag; 20 never had it; 24 turned the frame on and dropped the experimental switch.
  t.is(flag, major === 22 && process.allowedNodeEnvironmentFlags.has(CONTEXT_FRAME_FLAG) ? CONTEXT_FRAME_FLAG : undefined);
  if (major !== 22) {
    t.false(process.allowedNodeEnvironmentFlags.has(CONTEXT_FRAME_FLAG));
  }
});
