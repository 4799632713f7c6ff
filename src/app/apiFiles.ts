import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../platform/packageRoot.ts';
import { type Application, currentApplication } from './application.ts';
import { API_INFO, apiDocument } from './modules.ts';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  format?: string;
  minimum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};
type Parameter = { name: string; in: 'path' | 'query'; required: boolean; schema: JsonSchema & { description?: string } };
type Operation = {
  summary: string;
  description?: string;
  tags: string[];
  'x-permission'?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, unknown>;
};

/**
 * Requests that delete data or end the caller's session, besides every DELETE: the collection runs
 * them last, in a folder of their own, so a run with an admin's token does not cut off the rest.
 */
const DESTRUCTIVE = new Set(['POST /auth/sign-out', 'POST /auth/mfa/recovery-codes']);
const DESTRUCTIVE_FOLDER = 'destructive (run last)';
/** Ends every session of the caller: the very last request. */
const LAST = 'DELETE /auth/account';

const isDestructive = (name: string) => name.startsWith('DELETE ') || DESTRUCTIVE.has(name);

/** A Postman test script: the status is one the OpenAPI document declares for the operation, and never a 500 (a bug). */
function statusAssertion(name: string, operation: Operation) {
  const declared = Object.keys(operation.responses ?? {})
    .map(Number)
    .filter((status) => status !== 500);
  return [
    {
      listen: 'test',
      script: {
        type: 'text/javascript',
        exec: [
          `pm.test(${JSON.stringify(`${name} answers a status the OpenAPI document declares`)}, function () {`,
          `  pm.expect(${JSON.stringify(declared)}).to.include(pm.response.code);`,
          '});',
        ],
      },
    },
  ];
}

/** A value that fits the schema, for a request body someone edits before sending. */
function sample(schema: JsonSchema): unknown {
  const first = schema.examples?.[0] ?? schema.default ?? schema.const ?? schema.enum?.[0];
  if (first !== undefined) {
    return first;
  }
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) {
    return sample(variant);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, property]) => [name, sample(property)]));
    case 'array':
      return schema.items ? [sample(schema.items)] : [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return schema.format === 'date-time' ? '2026-01-01T00:00:00Z' : '';
    default:
      return null;
  }
}

function postmanRequest(path: string, method: string, operation: Operation) {
  const parameters = operation.parameters ?? [];
  const body = operation.requestBody?.content['application/json']?.schema;
  const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
  const query = parameters.filter((parameter) => parameter.in === 'query');
  const postmanPath = path.replace(/\{(\w+)\}/g, ':$1');
  const name = `${method.toUpperCase()} ${path}`;
  return {
    name,
    event: statusAssertion(name, operation),
    request: {
      method: method.toUpperCase(),
      header: body ? [{ key: 'Content-Type', value: 'application/json' }] : [],
      url: {
        raw: `{{base_url}}${postmanPath}`,
        host: ['{{base_url}}'],
        path: postmanPath.split('/').filter(Boolean),
        ...(pathParameters.length > 0
          ? {
              variable: pathParameters.map((parameter) => ({
                key: parameter.name,
                value: String(sample(parameter.schema) ?? ''),
                description: parameter.schema.description ?? '',
              })),
            }
          : {}),
        ...(query.length > 0
          ? {
              query: query.map((parameter) => ({
                key: parameter.name,
                value: parameter.required ? String(sample(parameter.schema) ?? '') : '',
                disabled: !parameter.required,
                description: parameter.schema.description ?? '',
              })),
            }
          : {}),
      },
      ...(body ? { body: { mode: 'raw', raw: JSON.stringify(sample(body), null, 2), options: { raw: { language: 'json' } } } } : {}),
      description: operation.summary,
      ...(operation.security && operation.security.length > 0 ? {} : { auth: { type: 'noauth' } }),
    },
  };
}

/** The collection, one folder per tag and the destructive requests last; bodies are editable samples of their schema. */
function postmanCollection(document: { paths: Record<string, Record<string, Operation>> }, version: string): unknown {
  const folders = new Map<string, Array<{ name: string }>>();
  const destructive: Array<{ name: string }> = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = operation.tags[0] ?? 'other';
      const request = postmanRequest(path, method, operation);
      if (isDestructive(request.name)) {
        destructive.push(request);
      } else {
        folders.set(tag, [...(folders.get(tag) ?? []), request]);
      }
    }
  }
  destructive.sort((a, b) => Number(a.name === LAST) - Number(b.name === LAST));
  return {
    info: { name: `${API_INFO.title} ${version}`, schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{token}}', type: 'string' }] },
    variable: [
      { key: 'base_url', value: 'http://localhost:8080' },
      { key: 'token', value: '' },
    ],
    item: [
      ...[...folders].sort(([a], [b]) => a.localeCompare(b)).map(([name, item]) => ({ name, item })),
      { name: DESTRUCTIVE_FOLDER, description: "Deletes data or ends the caller's session: run last, with an account you can lose.", item: destructive },
    ],
  };
}

function llmsText(document: { paths: Record<string, Record<string, Operation>> }, version: string): string {
  const lines = [
    `# ${API_INFO.title} ${version}`,
    '',
    `> ${API_INFO.description}`,
    '',
    'Errors are application/problem+json with a stable `code`.',
    '',
    '## Operations',
    '',
  ];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const permission = operation['x-permission'] ? ` [${operation['x-permission']}]` : '';
      lines.push(`- ${method.toUpperCase()} ${path}${permission}: ${operation.summary}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** The generated files under api/: one generator, so they never disagree. */
export async function renderApiFiles(application?: Application): Promise<Record<string, string>> {
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const document = apiDocument(application ?? (await currentApplication()), version) as {
    paths: Record<string, Record<string, Operation>>;
  };
  return {
    'openapi.json': JSON.stringify(document, null, 2) + '\n',
    'postman_collection.json': JSON.stringify(postmanCollection(document, version), null, 2) + '\n',
    'llms.txt': llmsText(document, version),
  };
}
