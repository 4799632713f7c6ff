// Generators of bad requests for the fuzz test, and a client that sends them byte for byte.
import { request } from 'node:http';
import fc from 'fast-check';

type JsonObject = Record<string, any>;

/** A query parameter or body field, with its JSON Schema. */
export interface Field {
  name: string;
  schema: JsonObject;
  required: boolean;
}

/** One operation of the OpenAPI document, as much of it as the fuzzer needs. */
export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: Field[];
  body: Field[] | undefined;
}

/** Every operation of an OpenAPI document. */
export function operationsOf(document: { paths: Record<string, Record<string, JsonObject>> }): Operation[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string; schema?: JsonObject; required?: boolean }>;
      const body = operation.requestBody?.content?.['application/json']?.schema as JsonObject | undefined;
      const required = new Set<string>((body?.required as string[] | undefined) ?? []);
      return {
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {}, required: p.required === true })),
        body: body
          ? Object.entries((body.properties ?? {}) as Record<string, JsonObject>).map(([name, schema]) => ({ name, schema, required: required.has(name) }))
          : undefined,
      };
    }),
  );
}

/** Who calls: nobody, an account holding platform_admin, an account holding no role, or a forger. */
export type Caller = 'none' | 'admin' | 'plain' | 'garbage';

export interface Body {
  bytes: Buffer;
  contentType: string | undefined;
  contentEncoding: string | undefined;
}

export interface FuzzCase {
  caller: Caller;
  garbageAuthorization: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Body | undefined;
}

// Text PostgreSQL cannot store (NUL, lone surrogates), then other strings meant to break things.
const unstorable = fc.constantFrom('\u0000', 'a\u0000b', '\uD800', '\uDFFF', 'x\uDC00y', '\uD83D', 'a\uDBFF');
const nasty = fc.oneof(
  unstorable,
  fc.constantFrom(
    '\u0001\u001f\u007f',
    '\u202e',
    '\uFEFF',
    "'; drop table accounts; --",
    '%00',
    '%',
    '%zz',
    '../..',
    '{}',
    '[]',
    'null',
    'true',
    '-1',
    '0',
    '1e400',
    '99999999999999999999',
    'NaN',
    '2026-11-20',
    'abc',
    '2026-02-30T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59+14:00',
    '2026-11-20T00:00:00Z',
    '\\u0000',
    '\u{1F600}',
    'settings.',
    '@every 0s',
  ),
);
const hugeText = fc.integer({ min: 1_000, max: 20_000 }).map((length) => 'x'.repeat(length));
export const badText = fc.oneof(
  { weight: 4, arbitrary: unstorable },
  { weight: 3, arbitrary: nasty },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), nasty, fc.string({ maxLength: 10 })).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: hugeText },
);

// Any JSON value, wrong types included, nested a little.
const badValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: badText },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, [], {}) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(badText, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(badText, badText, { maxKeys: 3 }) },
);

/** UTF-8 of a string (lone surrogates become U+FFFD, as any encoder does), every byte but unreserved ones escaped. */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`))
    .join('');
}

// Bytes that are not UTF-8 (a lone continuation, overlong NUL, an encoded surrogate), escaped or raw.
const invalidUtf8 = fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]);
const escapedBytes = (bytes: readonly number[]) => bytes.map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** A value for a path or query parameter, already in URL form. */
function urlValue(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: known.length > 0 ? 3 : 0, arbitrary: fc.constantFrom(...(known.length > 0 ? known : [''])).map(percentEncode) },
    { weight: 4, arbitrary: badText.filter((text) => text.length < 2_000).map(percentEncode) },
    { weight: 2, arbitrary: invalidUtf8.map(escapedBytes) },
    // Raw bytes 0x80-0xff: Node writes the request line as latin1, so these reach the server unescaped.
    { weight: 1, arbitrary: invalidUtf8.map((bytes) => String.fromCharCode(...bytes)) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '%2F', '..', '%2e%2e') },
  );
}

/** A value the field's schema accepts, so that a bad value beside it reaches the code behind validation. */
function goodValue(field: Field, known: Record<string, string[]>): fc.Arbitrary<unknown> {
  const schema = (field.schema.anyOf?.[0] ?? field.schema) as JsonObject;
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (known[field.name]) {
    return fc.constantFrom(...known[field.name]!);
  }
  if (schema.enum) {
    return fc.constantFrom(...(schema.enum as unknown[]));
  }
  if (types.includes('boolean')) {
    return fc.boolean();
  }
  if (types.includes('integer') || types.includes('number')) {
    return fc.constantFrom(schema.minimum ?? 0, 1);
  }
  if (schema.format === 'date-time') {
    return fc.constantFrom('2026-11-20T00:00:00Z', '2026-11-19T23:00:00-01:00');
  }
  if (types.includes('string')) {
    return fc.constantFrom('fuzz', 'a reason', 'user@example.com');
  }
  if (types.includes('array')) {
    return fc.constant([]);
  }
  return badValue;
}

/**
 * Fields of a query or body: each one absent, good or bad, mostly good or absent, so one bad
 * value usually travels with valid neighbours past validation of the whole.
 */
function fieldValues<T>(fields: Field[], good: (field: Field) => fc.Arbitrary<T>, bad: (field: Field) => fc.Arbitrary<T>): fc.Arbitrary<Array<[string, T]>> {
  const entry = (field: Field) =>
    fc.oneof(
      { weight: 3, arbitrary: good(field).map((value): [string, T] | undefined => [field.name, value]) },
      { weight: 2, arbitrary: bad(field).map((value): [string, T] | undefined => [field.name, value]) },
      { weight: field.required ? 1 : 4, arbitrary: fc.constant(undefined) },
    );
  const extra = fc.option(
    fc.tuple(fc.constantFrom('unexpected', '__proto__', 'constructor', 'limit'), bad({ name: 'unexpected', schema: {}, required: false })),
    { freq: 4 },
  );
  return fc
    .tuple(fc.tuple(...fields.map(entry)), extra)
    .map(([entries, more]) => [...entries, more].filter((item): item is [string, T] => item !== null && item !== undefined));
}

function queryString(operation: Operation, known: Record<string, string[]>): fc.Arbitrary<string> {
  const good = (field: Field) => goodValue(field, known).map((value) => percentEncode(String(value)));
  const pairs = fieldValues(operation.query, good, (field) => urlValue(known[field.name] ?? []));
  return fc.oneof(
    { weight: 6, arbitrary: pairs.map((entries) => (entries.length > 0 ? `?${entries.map(([name, value]) => `${name}=${value}`).join('&')}` : '')) },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?=', '?a', '?%', '?from=2026-11-20&to=abc', '?limit=0&limit=1') },
  );
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8'];
const OTHER_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=bogus',
  'application/json; charset=utf-16',
  'application/problem+json',
  'application/xml',
  '*/*',
  '',
];

function bodyOf(operation: Operation, known: Record<string, string[]>): fc.Arbitrary<Body | undefined> {
  const fields = (operation.body ?? []).map((field) => field.name);
  const object = fieldValues(
    operation.body ?? [],
    (field) => goodValue(field, known),
    () => badValue,
  ).map((entries) => JSON.stringify(Object.fromEntries(entries)));
  const deep = fc
    .tuple(fc.integer({ min: 20, max: 30_000 }), fc.boolean())
    .map(([depth, array]) => (array ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));
  const bytes = fc.oneof(
    { weight: 8, arbitrary: object.map((text) => Buffer.from(text)) },
    { weight: 1, arbitrary: badValue.map((value) => Buffer.from(JSON.stringify(value) ?? 'null')) },
    { weight: 1, arbitrary: deep.map((text) => Buffer.from(text)) },
    // Truncated or garbled JSON.
    { weight: 1, arbitrary: fc.tuple(object, fc.nat()).map(([text, cut]) => Buffer.from(text.slice(0, cut % Math.max(1, text.length)) + '\u0000')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((array) => Buffer.from(array)) },
    // A JSON string holding bytes that are not UTF-8.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...fields, 'x'), invalidUtf8)
        .map(([field, raw]) => Buffer.concat([Buffer.from(`{"${field}":"`), Buffer.from(raw), Buffer.from('"}')])),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 65 * 1024, max: 80 * 1024 }).map((length) => Buffer.from(JSON.stringify({ [fields[0] ?? 'x']: 'x'.repeat(length) }))),
    },
  );
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...JSON_TYPES) },
    { weight: 2, arbitrary: fc.constantFrom(...OTHER_TYPES) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const contentEncoding = fc.oneof(
    { weight: 9, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'bogus', 'identity') },
  );
  const body = fc.record({ bytes, contentType, contentEncoding });
  return fc.oneof({ weight: operation.body ? 1 : 3, arbitrary: fc.constant(undefined) }, { weight: operation.body ? 5 : 1, arbitrary: body });
}

// Header values as an HTTP parser lets them through: space, visible ASCII and obs-text (0x80-0xff).
const headerText = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((code) => code !== 0x7f)
    .map((code) => String.fromCharCode(code)),
  maxLength: 300,
});

function headersOf(): fc.Arbitrary<Record<string, string>> {
  return fc.record(
    {
      'User-Agent': fc.oneof(headerText, fc.constantFrom('\u00ff\u00fe', 'curl/8.0')),
      'X-Forwarded-For': fc.oneof(
        headerText,
        fc.constantFrom(
          '1.2.3.4',
          '::1, 10.0.0.1',
          '[::1]:80',
          'unknown, , ,',
          'fe80::1%eth0',
          '::ffff:1.2.3.4',
          '[2001:db8::1]:443',
          '1.2.3.4:80',
          '999.1.1.1',
          '2001:db8::1, 127.0.0.1',
        ),
      ),
      'X-Request-Id': fc.oneof(headerText, fc.constantFrom('abc-123', 'a'.repeat(129))),
      Accept: fc.oneof(headerText, fc.constantFrom('application/json', 'text/html', '*/*')),
    },
    { requiredKeys: [] },
  );
}

const garbageAuthorization = fc.oneof(
  headerText,
  fc.constantFrom('Bearer', 'Bearer ', 'Bearer a.b.c', 'Basic YTpi', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', `Bearer ${'x'.repeat(4_000)}`),
);

// Not HEAD (its answer has no body to check) nor CONNECT (Node hands it to a 'connect' listener, not the app).
const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];

/** Bad requests to one operation; `known` holds real values of parameters by name (setting names, job names). */
export function casesOf(operation: Operation, known: Record<string, string[]>): fc.Arbitrary<FuzzCase> {
  const path = fc
    .tuple(...operation.pathParams.map((name) => urlValue(known[name] ?? [])))
    .map((values) => operation.pathParams.reduce((text, name, index) => text.replace(`{${name}}`, values[index]!), operation.path));
  return fc.record({
    caller: fc.constantFrom<Caller>('none', 'admin', 'admin', 'admin', 'plain', 'garbage'),
    garbageAuthorization,
    method: fc.oneof({ weight: 9, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) }),
    path: fc.tuple(path, queryString(operation, known)).map(([pathText, query]) => pathText + query),
    headers: headersOf(),
    body: bodyOf(operation, known),
  });
}

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Sends a case as it is (no client-side encoding or validation beyond Node's own), on a connection of its own. */
export function send(base: URL, fuzzCase: FuzzCase, authorization: string | undefined): Promise<Answer> {
  const headers: Record<string, string | number> = { ...fuzzCase.headers };
  if (authorization !== undefined) {
    headers.Authorization = authorization;
  }
  if (fuzzCase.body) {
    headers['Content-Length'] = fuzzCase.body.bytes.length;
    if (fuzzCase.body.contentType !== undefined) {
      headers['Content-Type'] = fuzzCase.body.contentType;
    }
    if (fuzzCase.body.contentEncoding !== undefined) {
      headers['Content-Encoding'] = fuzzCase.body.contentEncoding;
    }
  }
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      { host: base.hostname, port: base.port, method: fuzzCase.method, path: fuzzCase.path, headers, agent: false, timeout: 30_000 },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 30 s')));
    // The server may answer (413, 415) and close before reading a body it refuses: the answer counts.
    outgoing.on('error', (error) => {
      if (!answered) {
        reject(error);
      }
    });
    outgoing.end(fuzzCase.body?.bytes);
  });
}
