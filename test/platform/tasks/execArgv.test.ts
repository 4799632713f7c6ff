import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { threadOptions } from '../../../src/platform/tasks/execArgv.ts';

test('threads keep the options that decide how code loads, in both spellings, and drop V8 and process options', (t) => {
  t.deepEqual(
    threadOptions([
      '--max-old-space-size=4096',
      '--import',
      'tsx',
      '--title',
      'backplane',
      '--conditions=production',
      '--perf-basic-prof',
      '--enable-source-maps',
      '--inspect=127.0.0.1:9229',
      '-r',
      'dotenv/config',
      '--experimental-vm-modules',
      '--cpu-prof-dir',
      '/tmp/profiles',
    ]),
    ['--import', 'tsx', '--conditions=production', '--enable-source-maps', '-r', 'dotenv/config', '--experimental-vm-modules'],
  );
});

test('a process started with options worker threads refuse still runs tasks on its warm thread', async (t) => {
  const fixture = new URL('./fixtures/poolUnderFlags.ts', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=512', '--title=backplane-task-test', '--import', 'tsx', fixture], {
    timeout: 60_000,
  });
  t.deepEqual(JSON.parse(stdout.trim()), { doubled: 8 });
});
