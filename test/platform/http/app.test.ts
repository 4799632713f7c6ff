import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pino from 'pino';
import { z } from 'zod';
import { createHttpServer } from '../../../src/app/http.ts';
import { AppError } from '../../../src/platform/errors.ts';
import { unauthenticated } from '../../../src/platform/http/errors.ts';
import { bindRoutes, defineRoute } from '../../../src/platform/http/route.ts';
import { assertProblem } from '../../support/problems.ts';

let server: Server;
let base: string;

const routes = [
  defineRoute({
    method: 'POST',
    path: '/things/{id}',
    tag: 'test',
    summary: 'echo',
    params: z.object({ id: z.coerce.number().int().min(1) }),
    body: z.object({ name: z.string().min(1).max(10), count: z.number().int() }),
    responses: { 200: null },
    handler: ({ params, body }) => ({ id: params.id, ...body }),
  }),
  defineRoute({
    method: 'GET',
    path: '/things/{id}',
    tag: 'test',
    summary: 'fails',
    responses: { 200: null },
    handler: () => {
      throw new Error('secret driver text: password=hunter2');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/private',
    tag: 'test',
    summary: 'needs a bearer',
    permission: 'ops.system.read',
    responses: { 200: null },
    handler: () => ({ ok: true }),
  }),
  defineRoute({
    method: 'GET',
    path: '/conflict',
    tag: 'test',
    summary: 'typed error',
    responses: { 200: null },
    handler: () => {
      throw new AppError('thing_conflict', 'The thing changed.');
    },
  }),
  // A fixed path declared after a pattern that matches it: the router gives it to the pattern.
  defineRoute({
    method: 'GET',
    path: '/shelves/{name}',
    tag: 'test',
    summary: 'a pattern',
    params: z.object({ name: z.string() }),
    responses: { 200: null },
    handler: ({ params }) => ({ route: 'pattern', name: params.name }),
  }),
  defineRoute({
    method: 'GET',
    path: '/shelves/top',
    tag: 'test',
    summary: 'shadowed',
    responses: { 200: null },
    handler: () => ({ route: 'fixed' }),
  }),
  defineRoute({
    method: 'GET',
    path: '/fixed',
    tag: 'test',
    summary: 'a fixed path with a query',
    query: z.object({ size: z.coerce.number().int().max(10).optional() }),
    responses: { 200: null },
    handler: ({ query }) => ({ route: 'fixed', size: query.size ?? null }),
  }),
  // Defaults filled in from an empty query; the handler changes its input, which must not reach the next call.
  defineRoute({
    method: 'GET',
    path: '/pages',
    tag: 'test',
    summary: 'a query with defaults',
    query: z.object({ limit: z.coerce.number().int().max(100).default(50), order: z.enum(['asc', 'desc']).default('asc') }),
    responses: { 200: null },
    handler: ({ query }) => {
      const seen = { ...query };
      (query as { limit: number }).limit = 0;
      return seen;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/required',
    tag: 'test',
    summary: 'a query that must be given',
    query: z.object({ q: z.string().min(1) }),
    responses: { 200: null },
    handler: ({ query }) => ({ q: query.q }),
  }),
];

test.before(async () => {
  server = createHttpServer({
    logger: pino({ level: 'silent' }),
    routes: bindRoutes(routes, undefined),
    guard: {
      authenticate: async () => {
        throw unauthenticated();
      },
      authorize: () => undefined,
    },
    statuses: [{ thing_conflict: 409 }],
    metrics: { observe: () => undefined },
    bodyLimitBytes: 1024,
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(() => server.close());

const post = (path: string, body: string, type = 'application/json') => fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });

test('a valid body reaches the handler, parsed by its schema', async (t) => {
  const response = await post('/things/7', JSON.stringify({ name: 'a', count: 2, extra: true }));
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { id: 7, name: 'a', count: 2 });
});

test('malformed JSON is 400 invalid_json', async (t) => {
  await assertProblem(t, await post('/things/1', '{"name": '), 400, 'invalid_json');
});

test('a body over the limit is 413 request_too_large', async (t) => {
  await assertProblem(t, await post('/things/1', JSON.stringify({ name: 'x'.repeat(2000), count: 1 })), 413, 'request_too_large');
});

test('a body that is not JSON is 415 unsupported_media_type', async (t) => {
  await assertProblem(t, await post('/things/1', 'name=a', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
});

test('failed validation lists every issue by location, never echoing the value', async (t) => {
  const body = await assertProblem(t, await post('/things/0', JSON.stringify({ name: 'far-too-long-name', count: 'many' })), 422, 'validation_failed');
  const errors = body.errors as Array<{ location: string; message: string }>;
  t.deepEqual(errors.map((e) => e.location).sort(), ['body.count', 'body.name', 'params.id']);
  t.false(JSON.stringify(body).includes('far-too-long-name'));
});

test('an invalid path parameter is 422 with its location', async (t) => {
  const body = await assertProblem(t, await post('/things/0', JSON.stringify({ name: 'a', count: 1 })), 422, 'validation_failed');
  t.deepEqual(
    (body.errors as Array<{ location: string }>).map((e) => e.location),
    ['params.id'],
  );
});

test('a fixed path answers as the router matches it: the first matching route, any case, a trailing slash, HEAD, query validated', async (t) => {
  t.deepEqual(await (await fetch(`${base}/shelves/top`)).json(), { route: 'pattern', name: 'top' });
  for (const path of ['/fixed', '/FIXED', '/fixed/', '/fixed?size=3']) {
    const response = await fetch(`${base}${path}`);
    t.is(response.status, 200, path);
    t.is(((await response.json()) as { route: string }).route, 'fixed', path);
  }
  t.deepEqual(await (await fetch(`${base}/fixed?size=3`)).json(), { route: 'fixed', size: 3 });
  const head = await fetch(`${base}/fixed`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(await head.text(), '');
  await assertProblem(t, await fetch(`${base}/fixed?size=11`), 422, 'validation_failed');
  const post = await fetch(`${base}/fixed`, { method: 'POST' });
  t.regex(post.headers.get('allow') ?? '', /GET/);
  await assertProblem(t, post, 405, 'method_not_allowed');
});

test('a route called without a query gets the defaults its schema fills in, fresh each call; a required query is still refused', async (t) => {
  for (const path of ['/pages', '/pages', '/pages?']) {
    t.deepEqual(await (await fetch(`${base}${path}`)).json(), { limit: 50, order: 'asc' }, path);
  }
  t.deepEqual(await (await fetch(`${base}/pages?limit=7`)).json(), { limit: 7, order: 'asc' });
  await assertProblem(t, await fetch(`${base}/pages?limit=101`), 422, 'validation_failed');
  const missing = await assertProblem(t, await fetch(`${base}/required`), 422, 'validation_failed');
  t.deepEqual(
    (missing.errors as Array<{ location: string }>).map((e) => e.location),
    ['query.q'],
  );
  t.deepEqual(await (await fetch(`${base}/required?q=x`)).json(), { q: 'x' });
});

test('an unknown route is 404 not_found', async (t) => {
  await assertProblem(t, await fetch(`${base}/nowhere`), 404, 'not_found');
});

test('a wrong method is 405 method_not_allowed with Allow', async (t) => {
  const response = await fetch(`${base}/things/1`, { method: 'DELETE' });
  t.regex(response.headers.get('allow') ?? '', /GET/);
  t.regex(response.headers.get('allow') ?? '', /POST/);
  await assertProblem(t, response, 405, 'method_not_allowed');
});

test('an unexpected error is 500 internal_error without its text', async (t) => {
  const response = await fetch(`${base}/things/1`);
  const body = await assertProblem(t, response, 500, 'internal_error');
  t.false(JSON.stringify(body).includes('hunter2'));
  t.is(response.headers.get('cache-control'), 'no-store');
});

test('a typed error maps to its status and code', async (t) => {
  await assertProblem(t, await fetch(`${base}/conflict`), 409, 'thing_conflict');
});

test('a route with a permission asks the guard first', async (t) => {
  const response = await fetch(`${base}/private`);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
  await assertProblem(t, response, 401, 'unauthenticated');
});

test('a well-formed X-Request-Id is kept; a malformed one replaced', async (t) => {
  const kept = await fetch(`${base}/nowhere`, { headers: { 'X-Request-Id': 'abc-123' } });
  t.is(kept.headers.get('x-request-id'), 'abc-123');
  const replaced = await fetch(`${base}/nowhere`, { headers: { 'X-Request-Id': 'bad id with spaces' } });
  t.regex(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test("an early answer skips Koa with the frame's headers and problem; an early check that throws leaves the request to Koa", async (t) => {
  const early = createHttpServer({
    logger: pino({ level: 'silent' }),
    routes: bindRoutes(routes, undefined),
    guard: { authenticate: async () => Promise.reject(unauthenticated()), authorize: () => undefined },
    statuses: [{ thing_conflict: 409 }],
    metrics: { observe: () => undefined },
    bodyLimitBytes: 1024,
    answerEarly: ({ path }) => {
      if (path === '/boom') {
        throw new Error('the early check failed');
      }
      return path === '/early' ? new AppError('thing_conflict', 'Answered early.', { headers: { 'Retry-After': '3' } }) : undefined;
    },
  });
  early.listen(0, '127.0.0.1');
  await new Promise((resolve) => early.once('listening', resolve));
  const earlyBase = `http://127.0.0.1:${(early.address() as AddressInfo).port}`;
  try {
    const answered = await fetch(`${earlyBase}/early?x=1`, { method: 'POST', headers: { 'X-Request-Id': 'abc-1' } });
    const problem = await assertProblem(t, answered, 409, 'thing_conflict');
    t.is(problem.request_id, 'abc-1');
    t.is(answered.headers.get('x-request-id'), 'abc-1');
    t.is(answered.headers.get('cache-control'), 'no-store');
    t.is(answered.headers.get('retry-after'), '3');
    await assertProblem(t, await fetch(`${earlyBase}/boom`, { method: 'POST' }), 404, 'not_found');
    await assertProblem(
      t,
      await fetch(`${earlyBase}/things/1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' }),
      400,
      'invalid_json',
    );
  } finally {
    early.close();
  }
});
