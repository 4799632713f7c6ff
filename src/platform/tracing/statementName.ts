/**
 * A statement's name for its span: the prepared statement's own name when it has one
 * (`ratelimit_take`), else the semantic conventions' query summary, the operation and the first
 * table it reads or writes (`select audit_events`, `insert job_runs`). Built from the SQL text,
 * never from parameter values, which our statements only ever pass as $n.
 */
export function statementName(text: string, name?: string): string {
  if (name) {
    return name;
  }
  const sql = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  const operation = /^\s*\(?\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? 'query';
  // A CTE's name is not a table: the first table after the CTE bodies is found by the same search.
  const table = /\b(?:from|into|update|join|table)\s+(?:only\s+)?("?[a-z_][a-z0-9_$]*"?(?:\."?[a-z_][a-z0-9_$]*"?)?)/i.exec(sql)?.[1]?.replace(/"/g, '');
  return table && !KEYWORDS.has(table.toLowerCase()) ? `${operation} ${table}` : operation;
}

// Words that may follow FROM without being a table (`from unnest(...)`, `from (select ...)` never match).
const KEYWORDS = new Set(['unnest', 'generate_series', 'lateral', 'jsonb_to_recordset', 'json_to_recordset']);
