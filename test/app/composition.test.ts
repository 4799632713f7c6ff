import test from 'ava';
import { join } from 'node:path';
import { z } from 'zod';
import { CompositionError, backplaneModules, defineApplication, defineModule, routeDefiner } from '../../src/index.ts';
import { compose } from '../../src/app/application.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { runCli, startCluster } from '../support/cluster.ts';
import { getJson } from '../support/http.ts';
import { startTestInstance } from '../support/instance.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';
import { notesApplication, notesModule } from './fixtures/notesApplication.ts';

const defineRoute = routeDefiner();
const openRoute = defineRoute({ method: 'GET', path: '/open', tag: 'x', summary: 'x', responses: { 200: z.object({}) }, handler: () => ({}) });

test('a module naming a module the application does not list fails composition, naming both', (t) => {
  const lonely = defineModule({ name: 'lonely', needs: ['billing'] });
  const error = t.throws(() => defineApplication({ name: 'app', modules: [...backplaneModules, lonely] }), { instanceOf: CompositionError });
  t.true(error.message.includes('lonely') && error.message.includes('billing'));
});

test('a need listed after the module that needs it fails; so do two modules of one name and one permission declared twice', (t) => {
  const first = defineModule({ name: 'first', needs: ['second'] });
  const second = defineModule({ name: 'second', permissions: { 'second.read': 'x' } });
  t.throws(() => defineApplication({ name: 'app', modules: [first, second] }), { instanceOf: CompositionError });
  t.throws(() => defineApplication({ name: 'app', modules: [second, second] }), { instanceOf: CompositionError });
  const again = defineModule({ name: 'again', permissions: { 'second.read': 'x again' } });
  t.throws(() => defineApplication({ name: 'app', modules: [second, again] }), { instanceOf: CompositionError });
  t.notThrows(() => defineApplication({ name: 'app', modules: [second, first] }));
});

test('a route checking a permission no module declares fails: in TypeScript, and at composition', (t) => {
  const checked = defineRoute({
    method: 'GET',
    path: '/x',
    tag: 'x',
    summary: 'x',
    permission: 'typed.write',
    responses: { 200: z.object({}) },
    handler: () => ({}),
  });
  // @ts-expect-error -- typed.write is not among the module's declared permissions
  const typed = defineModule({ name: 'typed', permissions: { 'typed.read': 'x' }, routes: [checked] });
  t.throws(() => defineApplication({ name: 'app', modules: [typed] }), { instanceOf: CompositionError });
  t.notThrows(() => defineApplication({ name: 'app', modules: [defineModule({ name: 'open', routes: [openRoute] })] }));
});

test('a setting declared with reasonRequired: false is refused: every change of a setting needs a reason', (t) => {
  const waiving = defineModule({
    name: 'waiving',
    settings: [{ name: 'waiving.size', group: 'x', description: 'x', kind: 'integer', default: 1, min: 1, max: 2, reasonRequired: false }],
  });
  t.throws(() => defineApplication({ name: 'app', modules: [waiving] }), { instanceOf: CompositionError });
});

test("the application lists are collected from its modules: Backplane's and the application's", (t) => {
  const composed = compose(notesApplication);
  t.true(composed.permissions.has('notes.read') && composed.permissions.has('ops.jobs.run'));
  t.true(composed.settings.some((setting) => setting.name === 'notes.page_size'));
  t.true(composed.jobs.some((job) => job.name === 'notes_tidy') && composed.jobs.some((job) => job.name === 'audit_rollup'));
  t.true(composed.auditActions.has('notes.note.created'));
  t.true(composed.retention.some((target) => target.kind === 'audit_events'));
  t.is(notesApplication.modules.at(-1)!.name, 'openapi');
  t.true(notesApplication.modules.indexOf(notesModule) < notesApplication.modules.findIndex((module) => module.name === 'jobs'));
});

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

test.serial("an application's module is live beside Backplane's: its route, permission, setting and job", async (t) => {
  const instance = await startTestInstance(db.url, {}, { application: notesApplication });
  try {
    const reader = await accountWithToken(db.pool, { permissions: ['notes.read', 'ops.jobs.read', 'ops.settings.read'], methods: ['cli'] });
    const other = await accountWithToken(db.pool, { permissions: ['ops.jobs.read'] });
    const notes = await getJson<{ page_size: number }>(`${instance.url}/notes`, bearer(reader.token));
    t.is(notes.status, 200);
    t.is(notes.body.page_size, 20);
    t.is((await getJson(`${instance.url}/notes`, bearer(other.token))).status, 403);
    const setting = await getJson<{ value: number }>(`${instance.url}/ops/settings/notes.page_size`, bearer(reader.token));
    t.is(setting.status, 200);
    t.is(setting.body.value, 20);
    const jobs = await getJson<{ definitions: Array<{ name: string }> }>(`${instance.url}/ops/jobs/definitions`, bearer(reader.token));
    t.true(jobs.body.definitions.some((job) => job.name === 'notes_tidy'));
    // notes.page_size is declared reasonRequired: a change without a reason is refused, one with a reason applies.
    const writer = await accountWithToken(db.pool, { permissions: ['ops.settings.write'] });
    const put = (body: object) =>
      fetch(`${instance.url}/ops/settings/notes.page_size`, {
        method: 'PUT',
        headers: { ...bearer(writer.token), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unexplained = await put({ value: 30 });
    t.is(unexplained.status, 422);
    t.is(((await unexplained.json()) as { code: string }).code, 'setting_reason_required');
    t.is((await put({ value: 30, reason: '   ' })).status, 422);
    t.is((await put({ value: 30, reason: 'bigger pages' })).status, 200);
  } finally {
    await instance.drain();
  }
});

test.serial('context.settings and context.recordAudit are given to a module that names their module in needs, and refused to one that does not', async (t) => {
  let seen: { page: number; audit: string } | undefined;
  const reading = defineModule({
    name: 'reading',
    needs: ['audit', 'settings'],
    create(context) {
      seen = { page: context.settings.integer('auth.login_attempts'), audit: typeof context.recordAudit };
      return { api: undefined, routeDeps: undefined };
    },
  });
  const instance = await startTestInstance(db.url, {}, { application: defineApplication({ name: 'reading', modules: [...backplaneModules, reading] }) });
  await instance.drain();
  t.deepEqual(seen, { page: 10, audit: 'function' });
  const unnamed = defineModule({
    name: 'unnamed',
    create(context) {
      return { api: context.settings, routeDeps: undefined };
    },
  });
  const refused = await t.throwsAsync(
    startTestInstance(db.url, {}, { application: defineApplication({ name: 'unnamed', modules: [...backplaneModules, unnamed] }) }),
  );
  t.regex(refused!.message, /module unnamed uses module settings without naming it in its needs/);
});

test.serial("the application's backplane command grants its permissions and lists its jobs", async (t) => {
  const entry = join(import.meta.dirname, 'fixtures', 'notesApplication.ts');
  const env = { DATABASE_URL: db.url };
  const created = await runCli(['roles', 'create', 'note_readers', '--permission', 'notes.read', '--reason', 'notes team'], env, undefined, entry);
  t.is(created.code, 0, created.stderr);
  const listed = await runCli(['jobs', 'list', '--json'], env, undefined, entry);
  t.is(listed.code, 0, listed.stderr);
  t.true((JSON.parse(listed.stdout) as { definitions: Array<{ name: string }> }).definitions.some((job) => job.name === 'notes_tidy'));
  // The command refuses a change of notes.page_size (reasonRequired) without --reason, and changes nothing.
  t.is((await runCli(['settings', 'set', 'notes.page_size', '40'], env, undefined, entry)).code, 1);
  const kept = await runCli(['settings', 'get', 'notes.page_size', '--json'], env, undefined, entry);
  t.not((JSON.parse(kept.stdout) as { value: number }).value, 40);
  t.is((await runCli(['settings', 'set', 'notes.page_size', '40', '--reason', 'bigger pages'], env, undefined, entry)).code, 0);
  const refused = await runCli(['roles', 'create', 'note_readers_too', '--permission', 'notes.read', '--reason', 'notes team'], env);
  t.is(refused.code, 1, 'Backplane alone declares no notes.read');
});

test.serial("the pod's primary starts the work each module declares and hands it every instance it forks", async (t) => {
  const cluster = await startCluster(db.url, 2, {}, join(import.meta.dirname, 'fixtures', 'notesApplication.ts'));
  try {
    const metrics = await (await fetch(cluster.metricsUrl)).text();
    t.regex(metrics, /^notes_primary_instances_served_total{role="primary"} 2$/m);
  } finally {
    await cluster.stop();
  }
});
