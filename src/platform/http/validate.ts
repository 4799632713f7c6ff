import type { z } from 'zod';
import { type FieldIssue, validationFailed } from './errors.ts';

/** Parses one part of the request; every issue is listed with its location, never the value. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, part: 'params' | 'query' | 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) {
    return result.data;
  }
  throw validationFailed(describeIssues(result.error.issues, part));
}

export function describeIssues(issues: readonly z.core.$ZodIssue[], part: string): FieldIssue[] {
  return issues.map((issue) => ({
    location: [part, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
}
