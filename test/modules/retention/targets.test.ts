import test from 'ava';
import { auditEventsAging } from '../../../src/modules/audit/index.ts';
import { jobEnabled } from '../../../src/modules/jobs/index.ts';
import { orderTargets } from '../../../src/modules/retention/kinds.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

test('the retention job reads "still enabled" from its row alone: an override wins, else the default', async (t) => {
  t.true(await jobEnabled(db.pool, 'never_recorded'));
  t.false(await jobEnabled(db.pool, 'never_recorded', false));
  await db.pool.query(`insert into job_definitions (name, enabled) values ('held_job', false)`);
  t.false(await jobEnabled(db.pool, 'held_job'));
  await db.pool.query(`insert into job_definitions (name) values ('plain_job')`);
  t.true(await jobEnabled(db.pool, 'plain_job'));
});

test('retention puts the targets it is given in its own order and refuses a kind given twice', (t) => {
  const target = (kind: string) => ({ ...auditEventsAging, kind });
  const given = [target('release_instances'), target('custom_b'), target('audit_events'), target('custom_a'), target('job_runs')];
  t.deepEqual(
    orderTargets(given).map((entry) => entry.kind),
    ['audit_events', 'job_runs', 'release_instances', 'custom_b', 'custom_a'],
  );
  t.throws(() => orderTargets([target('job_runs'), target('job_runs')]), { message: /job_runs is given twice/ });
});
