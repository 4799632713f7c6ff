import type { z } from 'zod';
import { type FieldIssue } from '../errors.ts';
import { validationFailed } from './errors.ts';
import { StorableInput } from './schemas.ts';

type Part = 'params' | 'query' | 'body';

/**
 * Parses the parts of a request that have a schema; when any fails, one error lists every issue
 * of every part by location, never the submitted value. Every part is first checked for text
 * PostgreSQL cannot store and for runaway nesting (StorableInput), so route schemas need not be.
 */
export function parseRequest(parts: Array<[Part, z.ZodType | undefined, unknown]>): Record<Part, unknown> {
  const parsed: Record<Part, unknown> = { params: undefined, query: undefined, body: undefined };
  const issues: FieldIssue[] = [];
  for (const [part, schema, value] of parts) {
    if (!schema) {
      continue;
    }
    const storable = StorableInput.safeParse(value);
    if (!storable.success) {
      issues.push(...describeIssues(storable.error.issues, part));
      continue;
    }
    const result = schema.safeParse(value);
    if (result.success) {
      parsed[part] = result.data;
    } else {
      issues.push(...describeIssues(result.error.issues, part));
    }
  }
  if (issues.length > 0) {
    throw validationFailed(issues);
  }
  return parsed;
}

export function describeIssues(issues: readonly z.core.$ZodIssue[], part: string): FieldIssue[] {
  return issues.map((issue) => ({
    location: [part, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
}
