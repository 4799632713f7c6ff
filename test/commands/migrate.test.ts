import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { listMigrationFiles } from '../../src/platform/db/migrations.ts';
import { root, runCli } from '../support/cluster.ts';

// An empty database (not the migrated template), to see migrations from the start.
const name = `empty_${randomBytes(4).toString('hex')}`;
const adminUrl = () => process.env.BACKPLANE_TEST_ADMIN_URL!;
const url = () => adminUrl().replace(/\/postgres$/, `/${name}`);

test.before(async () => {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
});

test.after.always(async () => {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

test.serial('migrate status --json before and after migrate up; exit 1 when the database is ahead', async (t) => {
  const files = listMigrationFiles();
  const latest = Math.max(...files.map((f) => f.version));

  const before = await runCli(['migrate', 'status', '--json'], { DATABASE_URL: url() });
  t.is(before.code, 0, before.stderr);
  t.like(JSON.parse(before.stdout), { current: 0, latest, pending: files.length, ahead: false });

  const up = await runCli(['migrate', 'up'], { DATABASE_URL: url() });
  t.is(up.code, 0, up.stderr);
  t.regex(up.stdout, new RegExp(`applied ${files.length}`));
  // In a pipe the command says only its result: no progress on stderr.
  t.notRegex(up.stderr, /applying/);

  const after = await runCli(['migrate', 'status', '--json'], { DATABASE_URL: url() });
  t.like(JSON.parse(after.stdout), { current: latest, latest, pending: 0, ahead: false });
  // Every landed migration ran in a transaction (ADR 0125 lists the others here).
  t.deepEqual(JSON.parse(after.stdout).no_transaction, []);

  const again = await runCli(['migrate', 'up'], { DATABASE_URL: url() });
  t.regex(again.stdout, /nothing to apply/);

  const client = new pg.Client({ connectionString: url() });
  await client.connect();
  await client.query(`insert into schema_migrations (version, name) values (29991231000000, '29991231000000_from_the_future')`);
  await client.end();
  const ahead = await runCli(['migrate', 'status', '--json'], { DATABASE_URL: url() });
  t.is(ahead.code, 1);
  t.like(JSON.parse(ahead.stdout), { current: 29991231000000, latest, ahead: true });
});

test.serial('on a terminal migrate up says what the wait is for', async (t) => {
  // A second empty database, run under script(1), which gives the command a pseudo-terminal.
  const terminalDb = `${name}_tty`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${terminalDb}`);
  try {
    const command = [process.execPath, '--import', 'tsx', join(root, 'src', 'cli.ts'), 'migrate', 'up'].map((word) => `'${word}'`).join(' ');
    const output = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: adminUrl().replace(/\/postgres$/, `/${terminalDb}`) },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stdin.end();
      child.on('exit', (code) => resolve({ code, text }));
    });
    t.is(output.code, 0, output.text);
    t.regex(output.text, new RegExp(`applying ${listMigrationFiles().length} migration\\(s\\) under the advisory lock`));
  } finally {
    await admin.query(`drop database if exists ${terminalDb} with (force)`);
    await admin.end();
  }
});

test('a bad DATABASE_URL stops the command with one line naming the variable', async (t) => {
  const result = await runCli(['migrate', 'status'], { DATABASE_URL: 'mysql://nope' });
  t.is(result.code, 2);
  t.regex(result.stderr, /DATABASE_URL/);
});
