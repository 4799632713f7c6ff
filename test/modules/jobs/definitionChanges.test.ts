import test from 'ava';
import { changeDefinition } from '../../../src/modules/jobs/changeDefinition.ts';
import { createJobRegistry } from '../../../src/modules/jobs/definitions.ts';
import { purgeDefinitionHistory, purgeFinishedRuns } from '../../../src/modules/jobs/index.ts';
import type { JobsServiceDeps } from '../../../src/modules/jobs/ports.ts';
import type { RecordAudit } from '../../../src/platform/audit.ts';
import type { ChangedBy } from '../../../src/platform/caller.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

const jobs = createJobRegistry(
  ['audited', 'refused'].map((name) => ({
    name,
    description: 'test',
    schedule: '@every 1h',
    timeoutSeconds: 10,
    maxAttempts: 1,
    handler: async () => undefined,
  })),
);

const request: ChangedBy = {
  requestId: 'req-1',
  actor: { kind: 'account', id: 'acc-1', label: 'ops@example.com' },
  clientAddress: '203.0.113.9',
  userAgent: 'curl/8',
};

const deps = (record: RecordAudit): JobsServiceDeps => ({ pool: db.pool, jobs, recordAudit: record, queryTimeoutMs: 5_000 });

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table test_audit (job text, event jsonb)');
});

test.after.always(async () => {
  await db?.drop();
});

test("the audit port gets the change with actor, reason, client and request, inside the change's transaction", async (t) => {
  const record: RecordAudit = async (tx, event) => {
    await tx.query('insert into test_audit (job, event) values ($1, $2)', [event.resource?.id, JSON.stringify(event)]);
  };
  await changeDefinition(deps(record), 'audited', { enabled: false, reason: ' maintenance window ' }, request);
  const { rows } = await db.pool.query(`select event from test_audit where job = 'audited'`);
  t.is(rows.length, 1);
  t.like(rows[0].event, {
    action: 'jobs.definition.changed',
    resource: { type: 'job_definition', id: 'audited' },
    actor: { id: 'acc-1' },
    metadata: { before: { enabled: true, schedule: '@every 1h' }, after: { enabled: false, schedule: '@every 1h' }, reason: 'maintenance window' },
    requestId: 'req-1',
    clientAddress: '203.0.113.9',
    userAgent: 'curl/8',
  });
});

test('when the audit event cannot be recorded, the change does not happen', async (t) => {
  const failing: RecordAudit = async () => {
    throw new Error('audit store unavailable');
  };
  await t.throwsAsync(changeDefinition(deps(failing), 'refused', { enabled: false, reason: 'try' }, request), { message: 'audit store unavailable' });
  const row = await db.pool.query(`select enabled, version from job_definitions where name = 'refused'`);
  t.true(row.rows.length === 0 || (row.rows[0].enabled === null && row.rows[0].version === 0));
  t.is((await db.pool.query(`select 1 from job_definition_history where job = 'refused'`)).rowCount, 0);
});

test('history and finished runs past a cutoff are purged in batches; queued and running runs stay', async (t) => {
  await db.pool.query(
    `insert into job_definition_history (job, version, old_config, new_config, reason, changed_at)
     select 'old', g, '{}', '{}', 'x', now() - interval '400 days' from generate_series(1, 5) g`,
  );
  await db.pool.query(
    `insert into job_runs (job, trigger, queue, state, attempts, max_attempts, created_at, lease_expires_at)
     select 'old', 'manual', 'default', s, 1, 1, now() - interval '400 days',
            case when s = 'running' then now() end
     from generate_series(1, 2) g, unnest(array['succeeded', 'failed', 'queued', 'running']) s
     where not (s = 'running' and g = 2)`,
  );
  const cutoff = new Date(Date.now() - 365 * 86_400_000);
  t.is(await purgeDefinitionHistory(db.pool, cutoff, 3), 3);
  t.is(await purgeDefinitionHistory(db.pool, cutoff, 3), 2);
  t.is(await purgeDefinitionHistory(db.pool, cutoff, 3), 0);
  t.is(await purgeFinishedRuns(db.pool, cutoff, 10), 4);
  const left = await db.pool.query(`select state from job_runs where job = 'old' order by state`);
  t.deepEqual(
    left.rows.map((row) => row.state),
    ['queued', 'queued', 'running'],
  );
});
