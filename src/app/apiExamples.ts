import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../platform/packageRoot.ts';

/** Real requests and answers per operation ("GET /ops/system"), written by `npm run api:examples`. */
export type ApiExamples = Record<string, { request?: unknown; responses: Record<string, unknown> }>;

export const EXAMPLES_FILE = join('api', 'examples.json');

/** The committed examples; none when the file is absent (a trimmed install). */
export function loadApiExamples(): ApiExamples {
  const path = join(packageRoot, EXAMPLES_FILE);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ApiExamples) : {};
}
