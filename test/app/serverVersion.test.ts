import test from 'ava';
import { ConfigError } from '../../src/app/config.ts';
import { MIN_SERVER_VERSION_NUM, type VersionSource, checkServerVersion } from '../../src/app/database.ts';
import { createTestDatabase } from '../support/database.ts';

const reporting = (num: number, version: string): VersionSource => ({
  query: async <R>() => ({ rows: [{ num: String(num), version } as R] }),
});

test('a server older than PostgreSQL 14 is refused with one line that names it and the minimum', async (t) => {
  const error = await t.throwsAsync(checkServerVersion(reporting(130016, '13.16'), 'external PostgreSQL at db.internal'), { instanceOf: ConfigError });
  t.is(error.message, 'the database (external PostgreSQL at db.internal) runs PostgreSQL 13.16; Backplane needs PostgreSQL 14 or newer');
  t.notRegex(error.message, /\n/);
});

test('PostgreSQL 14 and every later major are accepted', async (t) => {
  for (const [num, version] of [
    [MIN_SERVER_VERSION_NUM, '14.0'],
    [150010, '15.10'],
    [160006, '16.6'],
    [170002, '17.2'],
    [180004, '18.4'],
    [190000, '19devel'],
  ] as const) {
    await t.notThrowsAsync(checkServerVersion(reporting(num, version), 'test'));
  }
});

test('the test server passes the check it is asked for', async (t) => {
  const db = await createTestDatabase();
  try {
    await t.notThrowsAsync(checkServerVersion(db.pool, 'the test server'));
  } finally {
    await db.drop();
  }
});
