// npm run bench -- <name>: runs bench/<name>/run.ts. Benchmarks are never part of npm test.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const name = process.argv[2];
const dir = import.meta.dirname;
const available = readdirSync(dir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'run.ts')))
  .map((entry) => entry.name);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(2);
}
await import(join(dir, name, 'run.ts'));
