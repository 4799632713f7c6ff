// Keyset pages of rows, for listings read by use cases and served by routes alike.

/** Rows to read for a page of `limit`: one more tells whether a next page exists. */
export const rowsForPage = (limit: number) => limit + 1;

/** A page of at most `limit` rows from what `rowsForPage` read, and the cursor of the next page when there is one. */
export function keysetPage<T extends { id: string }>(rows: T[], limit: number): { page: T[]; nextCursor: { next_cursor?: string } } {
  const page = rows.slice(0, limit);
  return { page, nextCursor: rows.length > limit ? { next_cursor: page.at(-1)!.id } : {} };
}
