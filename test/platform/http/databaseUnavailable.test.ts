import test from 'ava';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createHttpServer } from '../../../src/app/http.ts';
import { DatabaseUnavailableError } from '../../../src/platform/db/deadline.ts';
import { buildOpenApiDocument } from '../../../src/platform/http/openapi.ts';
import { platformStatuses } from '../../../src/platform/http/errors.ts';
import { mergeStatusTables } from '../../../src/platform/http/problem.ts';
import { type AnyRoute, bindRoutes, defineRoute } from '../../../src/platform/http/route.ts';
import { assertProblem } from '../../support/problems.ts';

let server: Server;
let base: string;
const lines: Array<Record<string, unknown>> = [];

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

const routes: AnyRoute[] = [
  defineRoute({ method: 'GET', path: '/refused', tag: 'test', summary: 'refused', responses: { 200: null }, handler: () => Promise.reject(refused()) }),
  defineRoute({
    method: 'POST',
    path: '/wrapped',
    tag: 'test',
    summary: 'an outage under a module error that is not typed',
    responses: { 200: null },
    handler: () => Promise.reject(new Error('saving failed', { cause: new DatabaseUnavailableError('deadline') })),
  }),
  defineRoute({
    method: 'GET',
    path: '/memory',
    tag: 'test',
    summary: 'from memory',
    needsDatabase: false,
    responses: { 200: null },
    handler: () => ({ ok: true }),
  }),
];

test.before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  server = createHttpServer({
    logger: pino({ level: 'info' }, sink),
    routes: bindRoutes(routes, undefined),
    guard: { authenticate: () => Promise.reject(new Error('no auth here')), authorize: () => undefined },
    statuses: [],
    metrics: { observe: () => undefined },
    bodyLimitBytes: 1024,
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(() => server.close());

test.serial('an outage is 503 database_unavailable with Retry-After and no driver text, warned once rather than logged per request', async (t) => {
  for (let index = 0; index < 3; index += 1) {
    const response = await fetch(`${base}/refused`);
    const body = await assertProblem(t, response, 503, 'database_unavailable');
    t.false(JSON.stringify(body).includes('ECONNREFUSED'));
    t.regex(response.headers.get('retry-after') ?? '', /^[1-9][0-9]?$/);
  }
  await assertProblem(t, await fetch(`${base}/wrapped`, { method: 'POST' }), 503, 'database_unavailable');
  const warnings = lines.filter((line) => line.msg === 'database unavailable: answering 503 database_unavailable');
  t.is(warnings.length, 1);
  t.like(warnings[0], { level: 40, reason: 'econnrefused' });
  t.false(lines.some((line) => (line.level as number) >= 50));
  t.false(JSON.stringify(lines).includes('stack'));
});

test('the document declares the 503 for every route that needs the database, and only for those', (t) => {
  const document = buildOpenApiDocument(routes, { title: 't', version: '0', description: 'd' }, { statuses: mergeStatusTables([platformStatuses]) }) as any;
  t.deepEqual(document.paths['/refused'].get.responses['503']['x-problem-codes'], ['database_unavailable']);
  t.deepEqual(document.paths['/refused'].get['x-problem-codes'], ['database_unavailable']);
  t.is(document.paths['/memory'].get.responses['503'], undefined);
  t.deepEqual(document.paths['/memory'].get['x-problem-codes'], []);
  t.truthy(document.paths['/refused'].get.responses['503'].headers['Retry-After']);
});
