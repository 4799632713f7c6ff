import { randomBytes } from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { listMigrationFiles, migrateUp } from '../../../src/platform/db/migrations.ts';

const NORMALIZATION_VERSION = 20261123000100;

// An empty database (not the migrated template): rows written before the normalisation migration.
const name = `email_${randomBytes(4).toString('hex')}`;
const adminUrl = () => process.env.BACKPLANE_TEST_ADMIN_URL!;
let pool: pg.Pool | undefined;

test.before(async () => {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  pool = new pg.Pool({ connectionString: adminUrl().replace(/\/postgres$/, `/${name}`), max: 2 });
});

test.after.always(async () => {
  await pool?.end();
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

test('the backfill stores normalised addresses; of colliding accounts the oldest keeps the address, the later are locked', async (t) => {
  const files = listMigrationFiles();
  await migrateUp(
    pool!,
    files.filter((file) => file.version < NORMALIZATION_VERSION),
  );
  const insert = async (email: string, minutesAgo: number) =>
    (
      await pool!.query<{ id: string }>(`insert into accounts (email, created_at) values ($1, now() - make_interval(mins => $2)) returning id`, [
        email,
        minutesAgo,
      ])
    ).rows[0]!.id;
  const oldest = await insert('Kate@Example.com', 30);
  const fullWidthKate = await insert('\uff4b\uff41\uff54\uff45@example.com', 20);
  const trailingDot = await insert('kate@example.com.', 10);
  const plain = await insert('Viewer@Example.com', 5);
  const fullWidthOps = await insert('\uff2f\uff30\uff33@example.com', 5);

  await migrateUp(pool!, files);

  const rows = await pool!.query<{ id: string; email: string; email_normalized: string | null; locked: boolean }>(
    `select id, email, email_normalized, locked_at is not null as locked from accounts`,
  );
  const byId = new Map(rows.rows.map((row) => [row.id, row]));
  t.like(byId.get(oldest), { email: 'Kate@Example.com', email_normalized: 'kate@example.com', locked: false });
  t.like(byId.get(fullWidthKate), { email_normalized: null, locked: true });
  t.like(byId.get(trailingDot), { email_normalized: null, locked: true });
  t.like(byId.get(plain), { email: 'Viewer@Example.com', email_normalized: 'viewer@example.com', locked: false });
  t.like(byId.get(fullWidthOps), { email_normalized: 'ops@example.com', locked: false });
  // The locks are access revocations like any other, so no token of those accounts outlives the upgrade.
  const revoked = await pool!.query(`select account_id from auth_access_revocations order by account_id`);
  t.deepEqual(revoked.rows.map((row) => row.account_id).sort(), [fullWidthKate, trailingDot].sort());
  await t.throwsAsync(pool!.query(`insert into accounts (email, email_normalized) values ('x', 'viewer@example.com')`), { message: /unique/ });
});
