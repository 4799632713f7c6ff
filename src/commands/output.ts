/** Prints one JSON document on stdout: stable snake_case keys, for programs. */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** Prints rows as aligned columns for people: spaces, never tabs; empty cells as "-". */
export function printTable(headers: string[], rows: Array<Array<string | number | boolean | null | undefined>>): void {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : String(cell))))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  for (const row of cells) {
    console.log(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
  }
}
