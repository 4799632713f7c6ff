import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/platform/db/embedded.ts';
import { waitFor } from './cluster.ts';

const asRoot = process.getuid?.() === 0;

function which(command: string): string | undefined {
  try {
    // Debian installs it in /usr/sbin, which a non-root PATH may lack.
    return execFileSync('sh', ['-c', `PATH="$PATH:/usr/sbin:/usr/local/sbin" command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Debian's pgbouncer: found on the PATH, or installed with apt-get when missing and this is root; else why not. */
export function pgbouncerBinary(): { path: string } | { missing: string } {
  const found = which('pgbouncer');
  if (found) {
    return { path: found };
  }
  if (!asRoot) {
    return { missing: 'pgbouncer is not installed and installing it needs root (apt-get install -y pgbouncer)' };
  }
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, { stdio: 'ignore', timeout: 300_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    try {
      apt(['install', '-y', 'pgbouncer']);
    } catch {
      // A fresh container has no package lists yet.
      apt(['update']);
      apt(['install', '-y', 'pgbouncer']);
    }
  } catch {
    return { missing: 'apt-get install -y pgbouncer failed' };
  }
  const installed = which('pgbouncer');
  return installed ? { path: installed } : { missing: 'apt-get installed no pgbouncer binary' };
}

export interface RunningPgbouncer {
  /** The database's URL with the host and port of the bouncer. */
  url: string;
  /** A statement on the admin console (SHOW …), in the simple protocol it requires. */
  admin<R extends pg.QueryResultRow>(statement: string): Promise<R[]>;
  stop(): Promise<void>;
}

/**
 * PgBouncer in transaction mode on a free loopback port in front of the database at `databaseUrl`,
 * with at most `serverConnections` server connections per database and user: fewer than its
 * clients hold, so transactions of different clients share them.
 */
export async function startPgbouncer(binary: string, databaseUrl: string, serverConnections = 4): Promise<RunningPgbouncer> {
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'backplane-pgbouncer-'));
  // As root it runs as the postgres user (it refuses root), which must read its files.
  chmodSync(dir, 0o755);
  const quoted = (value: string) => `"${value.replace(/"/g, '""')}"`;
  writeFileSync(join(dir, 'userlist.txt'), `${quoted(user)} ${quoted(password)}\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${serverConnections}`,
      'max_client_conn = 500',
      // pg sends it at connect; PgBouncer passes on only what it tracks.
      'ignore_startup_parameters = extra_float_digits',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  let output = '';
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = new URL(databaseUrl);
  url.port = String(port);
  const admin = async <R extends pg.QueryResultRow>(statement: string): Promise<R[]> => {
    const client = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer', connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query<R>(statement)).rows;
    } finally {
      await client.end();
    }
  };
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null) {
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  await waitFor(async () => ((await admin('show version')).length > 0 ? true : undefined), 20_000, 'pgbouncer to accept connections').catch(
    async (error: Error) => {
      await stop();
      throw new Error(`${error.message}\n${output.slice(-2000)}`);
    },
  );
  return { url: url.toString(), admin, stop };
}
