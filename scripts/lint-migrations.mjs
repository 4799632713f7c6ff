// squawk on every migration not listed in scripts/migrations-landed.txt (landed ones are never
// edited, so never linted): each file in a transaction unless it starts `-- backplane:no-transaction`
// (then squawk also asks every statement to be re-runnable). Arguments: folders (default migrations/).
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { install } from './postgresVersions.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Not a devDependency: squawk-cli's binaries are optional packages per platform, and a lock file
// written on one platform lacks the others' entries, which `npm ci` then refuses. Installed once
// into node_modules/.cache, as the other PostgreSQL majors are.
const SQUAWK = 'squawk-cli@2.66.0';
const landed = new Set(
  readFileSync(join(root, 'scripts', 'migrations-landed.txt'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#')),
);
const folders = process.argv.length > 2 ? process.argv.slice(2).map((folder) => resolve(folder)) : [join(root, 'migrations')];
const added = folders.flatMap((folder) =>
  readdirSync(folder)
    .filter((name) => name.endsWith('.sql') && !landed.has(name))
    .map((name) => join(folder, name)),
);
const outside = added.filter((file) => readFileSync(file, 'utf8').trimStart().toLowerCase().startsWith('-- backplane:no-transaction'));
const inside = added.filter((file) => !outside.includes(file));
let failed = false;
for (const [files, flags] of [
  [inside, ['--assume-in-transaction']],
  [outside, []],
]) {
  if (files.length === 0) {
    continue;
  }
  const result = spawnSync(join(install('squawk', SQUAWK), 'node_modules', '.bin', 'squawk'), ['--config', join(root, '.squawk.toml'), ...flags, ...files], {
    stdio: 'inherit',
  });
  failed ||= result.status !== 0;
}
console.log(
  `squawk: ${added.length} migration(s) after the landed baseline${added.length ? `: ${added.map((file) => basename(file)).join(', ')}` : ''}${failed ? ' (FAILED)' : ''}`,
);
process.exit(failed ? 1 : 0);
