import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { type AnyRoute, needsDatabase, requiresBearer } from './route.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

type JsonObject = Record<string, unknown>;

const problemSchema: JsonObject = {
  type: 'object',
  required: ['code', 'status', 'title'],
  properties: {
    type: { type: 'string', format: 'uri-reference' },
    title: { type: 'string' },
    status: { type: 'integer' },
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

/** Every route that needs the database may answer this; its own 503 codes, if any, are in x-problem-codes. */
const databaseUnavailable: JsonObject = {
  description:
    'database_unavailable: the database refused, failed or did not answer within the request deadline (APP_REQUEST_DEADLINE_SECONDS). ' +
    'Other 503 codes this operation lists in x-problem-codes use the same shape.',
  headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } },
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  delete converted.$schema;
  return converted;
}

function parameters(route: AnyRoute): JsonObject[] {
  const list: JsonObject[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
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

function responses(route: AnyRoute): JsonObject {
  const out: JsonObject = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    out[status] = schema
      ? { description: STATUS_CODES[Number(status)] ?? status, content: { 'application/json': { schema: jsonSchema(schema, 'output') } } }
      : { description: STATUS_CODES[Number(status)] ?? status };
  }
  const problemStatuses = new Set<number>([500]);
  if (route.body || route.query || route.params) {
    problemStatuses.add(422);
  }
  if (requiresBearer(route)) {
    problemStatuses.add(401);
  }
  if (route.permission) {
    problemStatuses.add(403);
  }
  for (const status of problemStatuses) {
    out[String(status)] = {
      description: STATUS_CODES[status] ?? String(status),
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  if (needsDatabase(route)) {
    out['503'] = { $ref: '#/components/responses/DatabaseUnavailable' };
  }
  return out;
}

/** The codes a route declares, and database_unavailable for every route that needs the database. */
function problemCodes(route: AnyRoute): string[] {
  return [...(route.problems ?? []), ...(needsDatabase(route) ? ['database_unavailable'] : [])];
}

/** The OpenAPI 3.1 document of the given routes; deterministic, so the committed copy can be diffed. */
export function buildOpenApiDocument(routes: AnyRoute[], info: OpenApiInfo): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const operation: JsonObject = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [route.tag],
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.permission ? { 'x-permission': route.permission } : {}),
      ...(problemCodes(route).length > 0 ? { 'x-problem-codes': problemCodes(route) } : {}),
      ...(requiresBearer(route) ? { security: [{ bearer: [] }] } : { security: [] }),
      parameters: parameters(route),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }
        : {}),
      responses: responses(route),
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Problem: problemSchema },
      responses: { DatabaseUnavailable: databaseUnavailable },
    },
  };
}
