// Checks one HTTP answer against an OpenAPI document: the status is declared for the operation, a
// problem's code is among those declared for that status, declared headers that came hold their
// schema, and the body validates against the declared schema (backplane/testing).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Application } from '../app/application.ts';

/** A parsed JSON document or part of one. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document
export type JsonObject = Record<string, any>;

/** One operation of the document, as an answer is matched to it. */
export interface Operation {
  /** Upper case: GET, POST. */
  method: string;
  /** The path as the document writes it: `/ops/jobs/runs/{id}`. */
  template: string;
  /** The template as a regular expression a concrete path is matched with. */
  pattern: RegExp;
  /** The operation object of the document. */
  spec: JsonObject;
}

/** An answer as a test received it. */
export interface ReceivedResponse {
  /** The HTTP status. */
  status: number;
  /** Its headers, as fetch gives them. */
  headers: Headers;
  /** The body as text (empty for none). */
  body: string;
}

/** What responseChecker returns: finds an answer's operation and says what of the answer the document does not declare. */
export interface ResponseChecker {
  /** The documented operation a request reached; undefined for paths and methods the document leaves out. */
  operationOf(method: string, path: string): Operation | undefined;
  /** What about the answer the document does not declare; empty when it declares all of it. */
  undeclared(operation: Operation, response: ReceivedResponse): string[];
}

/** Checks HTTP answers against an OpenAPI document: the application's own, or api/openapi.json. */
export function responseChecker(document: JsonObject): ResponseChecker {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addSchema({ ...document.components.schemas.Problem, $id: 'problem' });

  const operations: Operation[] = Object.entries(document.paths as JsonObject).flatMap(([template, methods]) =>
    Object.entries(methods as JsonObject).map(([method, spec]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      spec: spec as JsonObject,
    })),
  );

  const validators = new Map<object, ValidateFunction>();
  function validatorOf(schema: JsonObject): ValidateFunction {
    let validate = validators.get(schema);
    if (!validate) {
      const resolved = schema.$ref === '#/components/schemas/Problem' ? { $ref: 'problem' } : schema;
      validate = ajv.compile(resolved);
      validators.set(schema, validate);
    }
    return validate;
  }

  /** The documented operation a request reached; undefined for paths and methods the document leaves out. */
  function operationOf(method: string, path: string): Operation | undefined {
    return operations.find((operation) => operation.method === method && operation.pattern.test(path));
  }

  /** What about the answer the document does not declare; empty when it declares all of it. */
  function undeclared(operation: Operation, response: ReceivedResponse): string[] {
    const where = `${operation.method} ${operation.template} → ${response.status}`;
    const declared = operation.spec.responses[String(response.status)] as JsonObject | undefined;
    if (!declared) {
      return [`${where}: status not declared (declared: ${Object.keys(operation.spec.responses).join(', ')})`];
    }
    const problems: string[] = [];
    for (const [name, header] of Object.entries((declared.headers ?? {}) as JsonObject)) {
      const value = response.headers.get(name);
      if (value !== null && header.schema?.type === 'integer' && !/^\d+$/.test(value)) {
        problems.push(`${where}: header ${name} is ${JSON.stringify(value)}, not an integer`);
      }
    }
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const content = declared.content as JsonObject | undefined;
    if (!content) {
      if (response.body.length > 0 && response.status !== 302) {
        problems.push(`${where}: a body (${type}) where none is declared`);
      }
      return problems;
    }
    const media = content[type] as JsonObject | undefined;
    if (!media) {
      return [...problems, `${where}: content type ${type || '(none)'} not declared (declared: ${Object.keys(content).join(', ')})`];
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return [...problems, `${where}: the body is not JSON`];
    }
    const validate = validatorOf(media.schema as JsonObject);
    if (!validate(body)) {
      problems.push(`${where}: body invalid: ${ajv.errorsText(validate.errors)}`);
    }
    const codes = declared['x-problem-codes'] as string[] | undefined;
    const code = (body as { code?: unknown } | null)?.code;
    if (codes && typeof code === 'string' && !codes.includes(code)) {
      problems.push(`${where}: problem code ${code} not declared for this status (declared: ${codes.join(', ')})`);
    }
    return problems;
  }
  return { operationOf, undeclared };
}

/** The OpenAPI document an application serves at /openapi.json, built from its modules alone (no database). */
export async function applicationDocument(application: Application): Promise<JsonObject> {
  const { apiDocument } = await import('../app/modules.ts');
  return apiDocument(application, 'test') as JsonObject;
}
