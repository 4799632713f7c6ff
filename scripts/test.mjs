// The whole suite, as CI runs it: type-check, lint, then ava against an embedded PostgreSQL that
// this command starts on a free port and stops afterwards. Extra arguments go to ava.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const steps = [
  ['type-check', bin('tsc'), ['--noEmit', '-p', root]],
  ['lint', bin('eslint'), ['--max-warnings', '0', root]],
  // The formatter's settings are .prettierrc.json; `npm run format` applies them.
  ['format', bin('prettier'), ['--check', '--log-level', 'warn', 'src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.mjs']],
  ['migration lint', process.execPath, [join(root, 'scripts', 'lint-migrations.mjs')]],
  // Never fails: without a browser the browser tests skip and say why.
  ['chromium', process.execPath, [join(root, 'scripts', 'install-chromium.mjs')]],
  // Never fails: without it the Prometheus test skips and says why.
  ['prometheus', process.execPath, [join(root, 'scripts', 'install-prometheus.mjs')]],
  ['tests', process.execPath, ['--import', 'tsx', join(root, 'test', 'support', 'run.ts'), ...process.argv.slice(2)]],
];
for (const [name, command, args] of steps) {
  const started = Date.now();
  console.log(`\n== ${name}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`== ${name} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
  console.log(`== ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
