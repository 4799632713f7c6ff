import { z } from 'zod';

/** The cursor of a keyset page: the id of the last row of the previous page. One schema for every listing. */
export const PageCursor = z.string().regex(/^\d{1,18}$/, 'must be a cursor returned by a previous page');

// The page arithmetic is no HTTP matter: use cases import it from platform/paging.ts (ADR 0120).
export { keysetPage, rowsForPage } from '../paging.ts';
