import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// Copies of ../shared/contracts (the seed's tables as JSON Schema); test/contracts.test.ts keeps them equal.
const contracts = join(import.meta.dirname, '..', 'contracts');
const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
export const validateProblem = ajv.compile(JSON.parse(readFileSync(join(contracts, 'problem.schema.json'), 'utf8')));
export const validateSystem = ajv.compile(JSON.parse(readFileSync(join(contracts, 'ops-system.schema.json'), 'utf8')));

/** Asserts a problem+json answer with the status and code, valid against the seed's schema. */
export async function assertProblem(t: ExecutionContext, response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  t.is(response.status, status, JSON.stringify(body));
  t.is(body.code, code);
  t.is(body.status, status);
  t.regex(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.true(validateProblem(body), JSON.stringify(validateProblem.errors));
  t.is(body.request_id, response.headers.get('x-request-id'));
  return body;
}
