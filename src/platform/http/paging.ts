import { z } from 'zod';

/** The cursor of a keyset page: the id of the last row of the previous page. One schema for every listing. */
export const PageCursor = z.string().regex(/^\d{1,18}$/, 'must be a cursor returned by a previous page');

/**
 * A listing's `limit` query parameter: a whole number from 1 to `max`, `fallback` when absent. One
 * message for every way it can be wrong (`abc`, `1.5`, `0`, `1e400`), rather than zod's
 * "expected number, received NaN", which speaks of the parser, not of the parameter.
 */
export function PageLimit(max: number, fallback = 50) {
  const error = `must be a whole number from 1 to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(1, { error }).max(max, { error }).default(fallback);
}

// The page arithmetic is no HTTP matter: use cases import it from platform/paging.ts (ADR 0120).
export { keysetPage, rowsForPage } from '../paging.ts';
