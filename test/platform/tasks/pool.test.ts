import test from 'ava';
import client from 'prom-client';
import { createLogger } from '../../../src/platform/logging/logger.ts';
import { type TaskPool, createTaskPool } from '../../../src/platform/tasks/pool.ts';
import { TaskError, defineTask } from '../../../src/platform/tasks/task.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import type * as fixtures from './fixtures/tasks.ts';

const task = <F extends (input: never) => unknown>(name: string, exportName: string) =>
  defineTask<F>(`test.${name}`, import.meta.url, './fixtures/tasks', exportName);

const double = task<typeof fixtures.double>('double', 'double');
const failWithCode = task<typeof fixtures.failWithCode>('fail_with_code', 'failWithCode');
const failPlainly = task<typeof fixtures.failPlainly>('fail_plainly', 'failPlainly');
const databaseName = task<typeof fixtures.databaseName>('database_name', 'databaseName');
const queryMissingTable = task<typeof fixtures.queryMissingTable>('query_missing_table', 'queryMissingTable');
const pause = task<typeof fixtures.pause>('pause', 'pause');
const returnFunction = task<typeof fixtures.returnFunction>('return_function', 'returnFunction');
const notExported = task<typeof fixtures.double>('not_exported', 'noSuchExport');
const sawPreloadedModule = task<typeof fixtures.sawPreloadedModule>('saw_preloaded_module', 'sawPreloadedModule');

let db: TestDatabase;
let registry: client.Registry;
let pool: TaskPool;

test.before(async () => {
  db = await createTestDatabase();
  registry = new client.Registry();
  pool = createTaskPool({ threads: 2, closeTimeoutMs: 5_000, registry, logger: createLogger('silent') });
});

test.after.always(async () => {
  await pool?.close();
  await db?.drop();
});

test('a task takes and returns plain data on a worker thread, and its duration is a metric', async (t) => {
  t.deepEqual(await pool.runTask(double, { n: 21 }), { doubled: 42 });
  const text = await registry.metrics();
  t.regex(text, /backplane_task_duration_seconds_count\{task="test.double",outcome="ok"\} 1/);
  t.regex(text, /# TYPE backplane_task_queue_depth gauge/);
});

test('a typed error crosses the thread as its code and message', async (t) => {
  const error = await t.throwsAsync(pool.runTask(failWithCode, { code: 'quota_exceeded' }), { instanceOf: TaskError });
  t.is(error!.code, 'quota_exceeded');
  t.is(error!.task, 'test.fail_with_code');
  t.false(error!.message.includes('at '));
});

test('an error without a code becomes task_failed; a missing export task_not_found', async (t) => {
  t.is((await t.throwsAsync(pool.runTask(failPlainly, undefined as never), { instanceOf: TaskError }))!.code, 'task_failed');
  t.is((await t.throwsAsync(pool.runTask(notExported, { n: 1 }), { instanceOf: TaskError }))!.code, 'task_not_found');
});

test('a result that is not plain data fails as task_failed', async (t) => {
  t.is((await t.throwsAsync(pool.runTask(returnFunction, undefined as never), { instanceOf: TaskError }))!.code, 'task_failed');
});

test('a task opens its own database connection from the connection string it is given', async (t) => {
  const { name } = await pool.runTask(databaseName, { databaseUrl: db.url });
  t.is(name, new URL(db.url).pathname.slice(1));
});

test('a database error crosses as database_error with its SQLSTATE, never the statement or driver text', async (t) => {
  const error = await t.throwsAsync(pool.runTask(queryMissingTable, { databaseUrl: db.url }), { instanceOf: TaskError });
  t.is(error!.code, 'database_error');
  t.regex(error!.message, /42P01/);
  t.false(error!.message.includes('no_such_table'));
  t.false(error!.message.includes('secret_column'));
});

test('aborting the signal stops a running task as task_aborted', async (t) => {
  const controller = new AbortController();
  const running = pool.runTask(pause, { ms: 5_000 }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  t.is((await t.throwsAsync(running, { instanceOf: TaskError }))!.code, 'task_aborted');
});

test('tasks beyond the threads wait in the queue, which the depth gauge shows', async (t) => {
  const local = new client.Registry();
  const small = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry: local, logger: createLogger('silent') });
  const runs = [small.runTask(pause, { ms: 400 }), small.runTask(pause, { ms: 10 }), small.runTask(pause, { ms: 10 })];
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.true(small.queueDepth >= 1);
  t.regex(await local.metrics(), /backplane_task_queue_depth [12]\b/);
  t.regex(await local.metrics(), /backplane_tasks_running 3\b/);
  t.deepEqual(await Promise.all(runs), ['done', 'done', 'done']);
  await small.close();
});

test('close lets a task running on a thread finish before the threads stop', async (t) => {
  const small = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry: new client.Registry(), logger: createLogger('silent') });
  // Once a thread is up, a task runs on it at once rather than waiting in the queue.
  await small.runTask(double, { n: 1 });
  const running = small.runTask(pause, { ms: 300 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await small.close();
  t.is(await running, 'done');
});

test('a thread loads the preloaded task modules before it takes its first task', async (t) => {
  const preloaded = { file: new URL('./fixtures/preloaded.ts', import.meta.url).href };
  t.false(await pool.runTask(sawPreloadedModule, undefined as never));
  const warm = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry: new client.Registry(), logger: createLogger('silent'), preload: [preloaded] });
  t.true(await warm.runTask(sawPreloadedModule, undefined as never));
  await warm.close();
});

test('a task whose module does not exist is refused where it is declared', (t) => {
  t.throws(() => defineTask('test.missing', import.meta.url, './fixtures/missing', 'x'), { message: /does not exist/ });
  t.throws(() => defineTask('Bad Name', import.meta.url, './fixtures/tasks', 'double'), { message: /task name/ });
});
