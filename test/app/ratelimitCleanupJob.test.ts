import test from 'ava';
import { randomBytes } from 'node:crypto';
import { waitFor } from '../support/cluster.ts';
import { useInstances } from '../support/fixture.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] } } });

test('ratelimit_cleanup is an hourly job that deletes only the buckets full again', async (t) => {
  const definitions = (await (await fetch(`${app.instance.url}/ops/jobs/definitions`, { headers: app.headers.admin })).json()) as any;
  const list = Array.isArray(definitions) ? definitions : definitions.definitions;
  t.like(
    list.find((d: { name: string }) => d.name === 'ratelimit_cleanup'),
    { schedule: '0 * * * *', enabled: true },
  );

  const full = [randomBytes(32), randomBytes(32)];
  const busy = randomBytes(32);
  await app.db.pool.query(
    `insert into ratelimit_buckets (key, tat) values ($1, now() - interval '1 minute'), ($2, now() - interval '1 hour'), ($3, now() + interval '5 minutes')`,
    [full[0], full[1], busy],
  );
  const run = await fetch(`${app.instance.url}/ops/jobs/definitions/ratelimit_cleanup/run`, { method: 'POST', headers: app.headers.admin });
  t.is(run.status, 202);
  const { id } = (await run.json()) as { id: string };
  await waitFor(
    async () => {
      const { rows } = await app.db.pool.query('select state from job_runs where id = $1', [id]);
      return rows[0]?.state === 'succeeded' ? true : undefined;
    },
    15_000,
    'the cleanup run',
  );
  const left = await app.db.pool.query<{ key: Buffer }>('select key from ratelimit_buckets');
  t.deepEqual(
    left.rows.map((row) => row.key.toString('hex')),
    [busy.toString('hex')],
  );
});
