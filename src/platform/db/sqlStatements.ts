/**
 * Splits a migration's SQL into its statements: a statement that cannot run in a transaction
 * (CREATE INDEX CONCURRENTLY) must also be sent alone, since PostgreSQL runs a multi-statement
 * query string as one implicit transaction. Knows comments, quoted strings and identifiers, and
 * dollar quoting; nothing else of SQL.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    if (rest.startsWith('--')) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (rest.startsWith('/*')) {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (sql[i] === "'" || sql[i] === '"') {
      const quote = sql[i]!;
      let j = i + 1;
      // A doubled quote is an escaped one: skipping both keeps the scan inside the literal.
      while (j < sql.length && !(sql[j] === quote && sql[j + 1] !== quote)) {
        j += sql[j] === quote ? 2 : 1;
      }
      i = j + 1;
    } else if (sql[i] === '$' && /^\$[A-Za-z_]*\$/.test(rest)) {
      const tag = /^\$[A-Za-z_]*\$/.exec(rest)![0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end === -1 ? sql.length : end + tag.length;
    } else if (sql[i] === ';') {
      statements.push(sql.slice(start, i));
      i += 1;
      start = i;
    } else {
      i += 1;
    }
  }
  statements.push(sql.slice(start));
  return statements.map((statement) => statement.trim()).filter((statement) => withoutComments(statement) !== '');
}

/** The statement with its leading comment lines removed, for matching on what it does. */
export function withoutComments(statement: string): string {
  return statement
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .trim();
}
