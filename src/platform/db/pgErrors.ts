/** SQLSTATE codes the stores translate into module errors. */
export const PG = {
  /** unique_violation */
  uniqueViolation: '23505',
  /** foreign_key_violation */
  foreignKeyViolation: '23503',
  /** query_canceled: statement_timeout or a cancel request */
  queryCanceled: '57014',
  /** lock_not_available: lock_timeout */
  lockNotAvailable: '55P03',
  /** undefined_table */
  undefinedTable: '42P01',
} as const;

export function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
