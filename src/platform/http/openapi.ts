import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { type AnyRoute, needsDatabase, requiresBearer } from './route.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

/** What the document needs beyond the routes to say every answer an operation can give. */
export interface OpenApiAnswers {
  /** Every error code and its status (the platform's and every module's tables, merged). */
  statuses: Map<string, number>;
  /** Codes an operation answers outside its handler, e.g. maintenance or the per-address limit. */
  implicitProblems?: (route: AnyRoute) => string[];
  /** Real request and answer bodies per operation ("GET /ops/system"), shown as examples. */
  examples?: Record<string, { request?: unknown; responses: Record<string, unknown> }>;
}

/** Headers that come with an error status, whatever the code. */
const STATUS_HEADERS: Record<number, JsonObject> = {
  401: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
  429: {
    'Retry-After': { description: 'Seconds until one more request is admitted', schema: { type: 'integer', format: 'int32', minimum: 1 } },
    'RateLimit-Policy': { description: 'The limit that refused: "name";q=<limit>;w=<window seconds>', schema: { type: 'string' } },
    RateLimit: { description: 'What is left of it: "name";r=<remaining>;t=<seconds until reset>', schema: { type: 'string' } },
  },
  503: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', format: 'int32', minimum: 1 } } },
};

type JsonObject = Record<string, unknown>;

const problemSchema: JsonObject = {
  type: 'object',
  required: ['code', 'status', 'title'],
  properties: {
    type: { type: 'string', format: 'uri-reference' },
    title: { type: 'string' },
    status: { type: 'integer', format: 'int64' },
    code: { type: 'string', description: 'Stable machine-readable error code' },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['location', 'message'],
        properties: { location: { type: 'string' }, message: { type: 'string' } },
      },
    },
    request_id: { type: 'string' },
  },
};

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/**
 * Gives every integer its OpenAPI format from its bounds, so no schema can forget it: int32 when
 * the schema keeps it within 32 bits, int64 otherwise (ids, counts, bytes, durations).
 */
function withIntegerFormats(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(withIntegerFormats);
    return;
  }
  if (node === null || typeof node !== 'object') {
    return;
  }
  const object = node as JsonObject;
  if (object.type === 'integer' && object.format === undefined) {
    const min = typeof object.minimum === 'number' ? object.minimum : -Infinity;
    const max = typeof object.maximum === 'number' ? object.maximum : Infinity;
    object.format = min >= INT32_MIN && max <= INT32_MAX ? 'int32' : 'int64';
  }
  Object.values(object).forEach(withIntegerFormats);
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  delete converted.$schema;
  withIntegerFormats(converted);
  return converted;
}

function parameters(route: AnyRoute): JsonObject[] {
  const list: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) {
      continue;
    }
    const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      list.push({
        name,
        in: where,
        required: where === 'path' || (object.required ?? []).includes(name),
        schema: property,
      });
    }
  }
  return list;
}

function responses(route: AnyRoute, codes: string[], answers: OpenApiAnswers): JsonObject {
  const out: JsonObject = {};
  const examples = answers.examples?.[`${route.method} ${route.path}`]?.responses ?? {};
  const example = (status: string | number) => (examples[String(status)] === undefined ? {} : { example: examples[String(status)] });
  for (const [status, schema] of Object.entries(route.responses)) {
    out[status] = schema
      ? { description: STATUS_CODES[Number(status)] ?? status, content: { 'application/json': { schema: jsonSchema(schema, 'output'), ...example(status) } } }
      : { description: STATUS_CODES[Number(status)] ?? status };
  }
  // Each error status with the codes that answer it, from the status tables: the document cannot drift from the server.
  const byStatus = new Map<number, string[]>([[500, ['internal_error']]]);
  for (const code of codes) {
    const status = answers.statuses.get(code);
    if (status === undefined) {
      throw new Error(`${route.method} ${route.path} declares ${code}, which no status table maps`);
    }
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `${STATUS_CODES[status] ?? status}: ${statusCodes.join(', ')}`,
      'x-problem-codes': statusCodes,
      ...(STATUS_HEADERS[status] ? { headers: STATUS_HEADERS[status] } : {}),
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, ...example(status) } },
    };
  }
  return out;
}

/**
 * Every code an operation can answer with: those it declares, those of the platform for what it
 * takes (a bearer, a permission, input, a JSON body, the database) and the implicit ones.
 */
function problemCodes(route: AnyRoute, answers: OpenApiAnswers): string[] {
  const codes = [
    ...(requiresBearer(route) ? ['unauthenticated'] : []),
    ...(route.permission ? ['forbidden', ...(route.permission.startsWith('ops.') ? ['mfa_required'] : [])] : []),
    ...(route.body ? ['invalid_json', 'bad_request', 'request_too_large', 'unsupported_media_type', 'unsupported_content_encoding'] : []),
    ...(route.body || route.query || route.params ? ['validation_failed'] : []),
    ...(route.problems ?? []),
    ...(answers.implicitProblems?.(route) ?? []),
    ...(needsDatabase(route) ? ['database_unavailable'] : []),
  ];
  return [...new Set(codes)];
}

/** The OpenAPI 3.1 document of the given routes; deterministic, so the committed copy can be diffed. */
export function buildOpenApiDocument(routes: AnyRoute[], info: OpenApiInfo, answers: OpenApiAnswers): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const codes = problemCodes(route, answers);
    const operation: JsonObject = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [route.tag],
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.permission ? { 'x-permission': route.permission } : {}),
      'x-problem-codes': codes,
      ...(requiresBearer(route) ? { security: [{ bearer: [] }] } : { security: [] }),
      parameters: parameters(route),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: jsonSchema(route.body, 'input'),
                  ...(answers.examples?.[`${route.method} ${route.path}`]?.request === undefined
                    ? {}
                    : { example: answers.examples[`${route.method} ${route.path}`]!.request }),
                },
              },
            },
          }
        : {}),
      responses: responses(route, codes, answers),
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info,
    // Relative: the instance that serves this document serves the API; the second is `backplane serve`'s default.
    servers: [
      { url: '/', description: 'The instance serving this document' },
      { url: 'http://localhost:8080', description: 'backplane serve on this machine (PORT 8080)' },
    ],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Problem: problemSchema },
    },
  };
}
