// A command or serve that cannot start says why in one line on stderr and exits 2: a secret file
// that gives no secret, a database that refuses the password or does not answer. No stack, no pg
// error object, never the password.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { TEST_ENCRYPTION_KEY } from '../support/instance.ts';

const root = join(import.meta.dirname, '..', '..');
const WRONG_PASSWORD = 'not-the-password-7f3a';
const dir = mkdtempSync(join(tmpdir(), 'backplane-start-refusals-'));
// A user other than root reads what the test writes here (the unreadable-file case).
chmodSync(dir, 0o755);
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI from source with only the environment given (no DATABASE_URL of the runner's), as another user when uid is set. */
function cli(args: string[], env: Record<string, string>, uid?: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: tmpdir(), LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, APP_DATA_DIR: join(dir, 'data'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    // A serve that unexpectedly starts is stopped, and fails its test on the exit code.
    const stop = setTimeout(() => child.kill('SIGTERM'), 60_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(stop);
      resolve({ code, stdout, stderr });
    });
  });
}

/** serve on ports nobody uses, one instance: it stops at its first statement or runs (then the test fails on the exit code). */
async function serve(env: Record<string, string>): Promise<Ran> {
  return cli(['serve'], { PORT: String(await freePort()), APP_METRICS_PORT: String(await freePort()), APP_INSTANCES: '1', HOST: '127.0.0.1', ...env });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Exit 2 and exactly one line on stderr, matching `line`; no stack, nothing pg prints of its errors. */
function refusedInOneLine(t: ExecutionContext, ran: Ran, line: RegExp): void {
  t.is(ran.code, 2, ran.stderr);
  const lines = ran.stderr.trim().split('\n');
  t.is(lines.length, 1, ran.stderr);
  t.regex(lines[0]!, line);
  t.notRegex(ran.stderr, /\n\s+at |severity|routine:|\{$/m);
}

function secretFile(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

const withPassword = (url: string, password: string) => {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
};

test('a wrong database password: serve and migrate status exit 2 naming DATABASE_URL and the failure, never the password', async (t) => {
  const url = withPassword(db.url, WRONG_PASSWORD);
  const { hostname, port, username } = new URL(url);
  const expected = new RegExp(
    `^backplane: DATABASE_URL: authentication failed for user "${username}" on ${hostname}:${port}: check the user and its password$`,
  );
  for (const ran of [await serve({ DATABASE_URL: url }), await cli(['migrate', 'status'], { DATABASE_URL: url })]) {
    refusedInOneLine(t, ran, expected);
    t.false(`${ran.stdout}${ran.stderr}`.includes(WRONG_PASSWORD));
  }
});

test('from files, the message names DATABASE_URL_FILE and where the password came from', async (t) => {
  const url = new URL(db.url);
  url.password = '';
  const ran = await cli(['migrate', 'status'], {
    DATABASE_URL_FILE: secretFile('url', `${url}\n`),
    PGPASSWORD_FILE: secretFile('password', `${WRONG_PASSWORD}\n`),
  });
  refusedInOneLine(t, ran, /^backplane: DATABASE_URL_FILE \(password from PGPASSWORD_FILE\): authentication failed for user /);
  t.false(`${ran.stdout}${ran.stderr}`.includes(WRONG_PASSWORD));
});

test('a database that does not exist, and DATABASE_LISTEN_URL named when commands connect through it', async (t) => {
  const missing = db.url.replace(/\/[^/]+$/, '/no_such_database');
  refusedInOneLine(
    t,
    await cli(['migrate', 'status'], { DATABASE_URL: missing }),
    /^backplane: DATABASE_URL: database "no_such_database" does not exist on 127\.0\.0\.1:\d+$/,
  );
  const listen = await cli(['migrate', 'status'], { DATABASE_URL: db.url, DATABASE_LISTEN_URL: withPassword(db.url, WRONG_PASSWORD) });
  refusedInOneLine(t, listen, /^backplane: DATABASE_LISTEN_URL: authentication failed /);
});

test('a closed port: serve and migrate status exit 2 with "could not connect to host:port"', async (t) => {
  const port = await freePort();
  const url = `postgres://app:${WRONG_PASSWORD}@127.0.0.1:${port}/app`;
  for (const ran of [await serve({ DATABASE_URL: url }), await cli(['migrate', 'status'], { DATABASE_URL: url })]) {
    refusedInOneLine(t, ran, new RegExp(`^backplane: DATABASE_URL: could not connect to 127\\.0\\.0\\.1:${port} \\(connection refused\\)$`));
    t.false(`${ran.stdout}${ran.stderr}`.includes(WRONG_PASSWORD));
  }
});

test("a server that accepts and never answers: timed out, after the pool's 5 s connect bound", async (t) => {
  const silent = createServer(() => undefined);
  const port = await listen(silent);
  try {
    refusedInOneLine(
      t,
      await cli(['migrate', 'status'], { DATABASE_URL: `postgres://app:${WRONG_PASSWORD}@127.0.0.1:${port}/app` }),
      new RegExp(`^backplane: DATABASE_URL: timed out connecting to 127\\.0\\.0\\.1:${port}$`),
    );
  } finally {
    silent.close();
  }
});

test('an empty, blank, missing or unreadable key file: serve exits 2 naming the variable and the file, and makes no key', async (t) => {
  const empty = secretFile('empty-key', '');
  const blank = secretFile('blank-key', '  \n\n');
  const folder = join(dir, 'folder-key');
  mkdirSync(folder);
  for (const [path, why] of [
    [empty, 'is empty'],
    [blank, 'is empty'],
    [join(dir, 'missing-key'), 'it does not exist'],
    [folder, 'it is a folder, not a file'],
  ] as const) {
    const ran = await serve({ APP_ENCRYPTION_KEY: '', APP_ENCRYPTION_KEY_FILE: path, DATABASE_URL: db.url });
    refusedInOneLine(t, ran, new RegExp(`^backplane: APP_ENCRYPTION_KEY_FILE: .*${path}.*${why}`));
  }
  // Before this refusal, outside production an empty file meant "unset": a development key was made here.
  t.false(existsSync(join(dir, 'data', 'encryption.key')));
  // Unreadable by the service's user: root reads anything, so the command runs as nobody (65534) then.
  const unreadable = secretFile('unreadable-key', TEST_ENCRYPTION_KEY, 0o600);
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) {
    chmodSync(unreadable, 0o000);
  }
  const ran = await cli(
    ['migrate', 'status'],
    { APP_ENCRYPTION_KEY: '', APP_ENCRYPTION_KEY_FILE: unreadable, DATABASE_URL: db.url },
    asRoot ? 65534 : undefined,
  );
  refusedInOneLine(t, ran, new RegExp(`^backplane: APP_ENCRYPTION_KEY_FILE: cannot read ${unreadable}: this user may not read it$`));
});

test('a key file any user may read works, with one warning line naming the variable and the file', async (t) => {
  const open = secretFile('open-key', `${TEST_ENCRYPTION_KEY}\n`, 0o644);
  const ran = await cli(['migrate', 'status'], { APP_ENCRYPTION_KEY: '', APP_ENCRYPTION_KEY_FILE: open, DATABASE_URL: db.url });
  t.is(ran.code, 0, ran.stderr);
  t.deepEqual(ran.stderr.trim().split('\n'), [
    `backplane: warning: APP_ENCRYPTION_KEY_FILE: ${open} is readable by every user (mode 0644): let only the service's user or group read it (chmod o-r, or a Secret volume's defaultMode 0440 with fsGroup)`,
  ]);
  t.false(ran.stderr.includes(TEST_ENCRYPTION_KEY));
});
