import test from 'ava';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type EmbeddedDatabase, type SupervisionEvents, openEmbeddedDatabase } from '../../../src/platform/db/embedded.ts';
import { livePostmaster } from '../../../src/platform/db/postmaster.ts';
import { waitFor } from '../../support/cluster.ts';
import { testPostgresPrefix } from '../../support/database.ts';

// Two handles on one data folder in one process: ownership is a session lock, so the second is
// another owner's sharer exactly as a second process would be (the cluster tests run real ones).
const dataDir = mkdtempSync(join(tmpdir(), 'backplane-ownership-'));
// As root the server runs as the postgres user, which must be able to enter this folder.
chmodSync(dataDir, 0o755);
const clusterDir = join(dataDir, 'postgres');
const opened: EmbeddedDatabase[] = [];

const open = async () => {
  const database = await openEmbeddedDatabase({ dataDir, fast: true, packagePrefix: testPostgresPrefix() });
  opened.push(database);
  return database;
};

function recordEvents() {
  const seen = { restarted: 0, tookOver: [] as (number | undefined)[] };
  const events: SupervisionEvents = {
    died: () => undefined,
    restarting: () => undefined,
    restarted: () => (seen.restarted += 1),
    tookOver: (previous) => seen.tookOver.push(previous),
  };
  return { seen, events };
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return (await client.query('select 1 as one')).rows[0].one === 1;
  } finally {
    await client.end().catch(() => undefined);
  }
}

test.afterEach.always(async () => {
  for (const database of opened.splice(0)) {
    await database.stop().catch(() => undefined);
  }
});

test.after.always(() => rmSync(dataDir, { recursive: true, force: true }));

test.serial('a server another live process owns is used and left running; its owner stops it', async (t) => {
  const owner = await open();
  t.like(owner, { owned: true, found: false });
  const sharer = await open();
  t.like(sharer, { owned: false, found: true, owner: process.pid, url: owner.url });
  const postmaster = livePostmaster(clusterDir);
  await sharer.stop();
  t.deepEqual(livePostmaster(clusterDir), postmaster);
  t.true(await answers(owner.url));
  await owner.stop();
  t.is(livePostmaster(clusterDir), undefined);
});

test.serial('a supervising sharer starts the server again once its owner stopped it, and owns it from then on', async (t) => {
  const owner = await open();
  const sharer = await open();
  const { seen, events } = recordEvents();
  sharer.supervise(events);
  await owner.stop();
  await waitFor(async () => (sharer.owned && livePostmaster(clusterDir) ? true : undefined), 60_000, 'the sharer to restart and own the server');
  t.is(seen.restarted, 1);
  t.deepEqual(seen.tookOver, [process.pid]);
  t.true(await answers(sharer.url));
  await sharer.stop();
  t.is(livePostmaster(clusterDir), undefined);
});

test.serial('an owner gone without stopping its server is taken over by a supervising sharer, and cannot stop it any more', async (t) => {
  const owner = await open();
  const sharer = await open();
  const { seen, events } = recordEvents();
  sharer.supervise(events);
  // What the server sees of an owner killed with SIGKILL: the session holding the lock ends.
  const admin = new pg.Client({ connectionString: owner.url.replace(/\/backplane$/, '/postgres') });
  await admin.connect();
  try {
    const ended = await admin.query(`select pg_terminate_backend(l.pid) from pg_locks l where l.locktype = 'advisory' and l.granted and l.objid = 72010532`);
    t.is(ended.rowCount, 1);
  } finally {
    await admin.end();
  }
  await waitFor(async () => (sharer.owned ? true : undefined), 30_000, 'the sharer to take the server over');
  t.deepEqual(seen.tookOver, [process.pid]);
  t.is(seen.restarted, 0);
  const postmaster = livePostmaster(clusterDir);
  await owner.stop();
  t.deepEqual(livePostmaster(clusterDir), postmaster);
  await sharer.stop();
  t.is(livePostmaster(clusterDir), undefined);
});
