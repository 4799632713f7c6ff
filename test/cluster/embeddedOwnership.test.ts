import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { isRunning, livePostmaster } from '../../src/platform/db/postmaster.ts';
import { TEST_ENCRYPTION_KEY } from '../support/instance.ts';
import { type TestCluster, root, runCli, startCluster, waitFor } from '../support/cluster.ts';

// The primary owns its embedded PostgreSQL whether it started it or found it running (ADR 0131):
// real `serve` and command processes on a data folder of the test's own, killed for real.

/** A data folder of the test's own; whatever the test leaves running on it is stopped in its teardown. */
function dataFolder(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'backplane-owned-db-'));
  // As root the server runs as the postgres user, which must be able to enter this folder.
  chmodSync(dir, 0o755);
  t.teardown(async () => {
    const postmaster = livePostmaster(join(dir, 'postgres'));
    if (postmaster) {
      process.kill(postmaster.pid, 'SIGQUIT');
    }
    await waitFor(async () => (processesFor(dir).length === 0 ? true : undefined), 30_000, 'the test servers to stop').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Processes (zombies aside) whose command line names the folder: the postmaster runs with `-D <dir>/postgres`. */
function processesFor(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(join(dir, 'postgres'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The instances a primary forked that still run: node processes running the same entry file. */
function instancesOf(primary: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && isRunning(Number(entry)))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return parent === primary && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('cli.ts');
      } catch {
        return false;
      }
    })
    .map(Number);
}

const metric = async (cluster: TestCluster) => (await fetch(cluster.metricsUrl)).text();
const ready = async (cluster: TestCluster) => ((await fetch(`${cluster.url}/readyz`)).status === 200 ? true : undefined);

/** `serve` on the folder, killed in the test's teardown if still running (teardowns run last first: before the folder's). */
async function serve(t: ExecutionContext, dir: string): Promise<TestCluster> {
  const cluster = await startCluster('', 1, { APP_DATA_DIR: dir });
  t.teardown(() => {
    if (cluster.process.exitCode === null) {
      cluster.process.kill('SIGKILL');
    }
  });
  return cluster;
}

test.serial(
  'after kill -9 of the primary the next serve owns the running database: restarts it when it dies, shares it with a second serve, stops it on SIGTERM',
  async (t) => {
    const dir = dataFolder(t);
    const clusterDir = join(dir, 'postgres');
    const first = await serve(t, dir);
    const postmaster = livePostmaster(clusterDir)!.pid;
    const instances = instancesOf(first.process.pid!);
    t.is(instances.length, 1);
    first.process.kill('SIGKILL');
    // Instances end when their primary's channel closes; one that lingers is killed.
    await waitFor(async () => (instances.some(isRunning) ? undefined : true), 30_000, 'the instances to exit').catch(() =>
      instances.filter(isRunning).forEach((pid) => process.kill(pid, 'SIGKILL')),
    );
    t.is(livePostmaster(clusterDir)?.pid, postmaster, 'the server outlives a primary killed with SIGKILL');

    const owner = await serve(t, dir);
    t.is(livePostmaster(clusterDir)?.pid, postmaster, 'found and used, not started again');
    t.regex(owner.output(), /\(found running\)/);
    t.regex(owner.output(), /no live process owned it.*this process owns it now/);

    process.kill(postmaster, 'SIGKILL');
    await waitFor(
      async () => (/backplane_embedded_database_restarts_total\{role="primary"\} [1-9]/.test(await metric(owner)) ? true : undefined),
      90_000,
      'the restart to be counted',
    );
    await waitFor(() => ready(owner), 60_000, '/readyz 200 after the restart');
    t.not(livePostmaster(clusterDir)?.pid, postmaster);
    t.regex(owner.output(), /embedded PostgreSQL restarted/);
    const restarted = livePostmaster(clusterDir)!.pid;

    // A command and a second primary on the same folder use the server; neither takes it or stops it.
    const status = await runCli(['migrate', 'status'], { DATABASE_URL: '', APP_DATA_DIR: dir });
    t.is(status.code, 0, status.stderr);
    const second = await serve(t, dir);
    t.regex(second.output(), new RegExp(`owned by process ${owner.process.pid}, which stops it on exit`));
    t.is(await second.stop(), 0);
    t.is(livePostmaster(clusterDir)?.pid, restarted);
    t.true(await ready(owner));

    t.is(await owner.stop(), 0);
    await waitFor(async () => (processesFor(dir).length === 0 ? true : undefined), 30_000, 'no process left on the data folder');
    t.is(livePostmaster(clusterDir), undefined);
  },
);

/** A module migrations folder holding one migration. */
function moduleMigration(t: ExecutionContext, sql: string): string {
  const dir = join(dataFolder(t), 'migrations');
  mkdirSync(dir);
  writeFileSync(join(dir, '20990101000000_fixture_step.sql'), sql);
  return dir;
}

const fixtureCli = join(root, 'test', 'support', 'moduleMigrationsCli.ts');

test.serial('a start whose migration does not apply exits non-zero and leaves no database running: serve and migrate up', async (t) => {
  const dir = dataFolder(t);
  const env = {
    DATABASE_URL: '',
    APP_DATA_DIR: dir,
    APP_INSTANCES: '1',
    APP_METRICS_PORT: '0',
    PORT: '0',
    BACKPLANE_TEST_MODULE_MIGRATIONS: moduleMigration(t, 'select * from no_such_table;\n'),
  };
  for (const args of [['serve'], ['migrate', 'up']]) {
    const result = await runCli(args, env, undefined, fixtureCli);
    t.true(result.code !== 0 && result.code !== null, `${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    t.regex(result.stderr, /no_such_table/);
    if (args[0] === 'migrate') {
      // One line: the migration and PostgreSQL's words, no stack.
      t.is(result.code, 1);
      t.regex(result.stderr.trim(), /^backplane: migration \d{14}_\w+ failed: relation "no_such_table" does not exist$/);
    }
    t.deepEqual(processesFor(dir), [], `${args.join(' ')} left its database running`);
  }
});

test.serial('SIGTERM while a migration runs stops the database the command started, and exits 143', async (t) => {
  const dir = dataFolder(t);
  const env = { DATABASE_URL: '', APP_DATA_DIR: dir, BACKPLANE_TEST_MODULE_MIGRATIONS: moduleMigration(t, 'select pg_sleep(600);\n') };
  let stderr = '';
  const command = spawn(process.execPath, ['--import', 'tsx', fixtureCli, 'migrate', 'up'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.teardown(() => command.kill('SIGKILL'));
  command.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => command.on('exit', (code) => resolve(code)));
  const sleeping = async () => {
    const server = livePostmaster(join(dir, 'postgres'));
    if (!server) {
      return undefined;
    }
    const password = readFileSync(join(dir, 'postgres.secret'), 'utf8').trim();
    const client = new pg.Client({ connectionString: `postgres://backplane:${encodeURIComponent(password)}@127.0.0.1:${server.port}/backplane` });
    try {
      await client.connect();
      const { rowCount } = await client.query(`select 1 from pg_stat_activity where query like 'select pg_sleep(600)%'`);
      return rowCount ? true : undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  await waitFor(sleeping, 120_000, 'the migration to run');
  command.kill('SIGTERM');
  t.is(await exited, 143, stderr);
  t.deepEqual(processesFor(dir), []);
});
