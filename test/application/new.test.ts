import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readLock } from '../../src/commands/upgradeLock.ts';
import { backplane } from './support.ts';

const parent = mkdtempSync(join(tmpdir(), 'backplane-new-'));
test.after.always(() => rmSync(parent, { recursive: true, force: true }));
const version = (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

test('new writes an application: package.json on backplane, main.ts, the notes module, migrations, deploy, a lock naming this release, one commit', async (t) => {
  const dir = join(parent, 'my-service');
  const tarball = join(parent, 'backplane-0.0.0.tgz');
  writeFileSync(tarball, '');
  const result = await backplane(['new', dir, '--package', tarball], parent);
  t.is(result.code, 0, result.stderr);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies: Record<string, string>;
    scripts: Record<string, string>;
  };
  t.is(pkg.name, 'my-service');
  t.is(pkg.dependencies.backplane, `file:${tarball}`);
  t.truthy(pkg.scripts.start && pkg.scripts.test);
  for (const file of [
    'tsconfig.json',
    'src/main.ts',
    'src/modules/notes/index.ts',
    '.gitignore',
    'deploy/Dockerfile',
    'deploy/kubernetes/overlays/production/kustomization.yaml',
  ]) {
    t.true(existsSync(join(dir, file)), file);
  }
  t.true(readFileSync(join(dir, 'src', 'modules', 'notes', 'migrations', '20261126120000_create_notes.sql'), 'utf8').includes('create table notes'));
  t.false(readFileSync(join(dir, 'deploy/kubernetes/overlays/production/kustomization.yaml'), 'utf8').includes('{{'));
  const lock = JSON.parse(readFileSync(join(dir, 'backplane.lock'), 'utf8')) as Record<string, unknown>;
  t.like(lock, { format: 2, release: version, package: `file:${tarball}` });
  t.deepEqual(readLock(join(dir, 'backplane.lock')), { release: version });
  t.is(execFileSync('git', ['log', '--oneline'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').length, 1);
  t.is(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }), '');
});

test('the application gets a README: its name, its two commands (run and test) and its first steps', async (t) => {
  const dir = join(parent, 'with-readme');
  const result = await backplane(['new', dir, '--no-git', '--name', '@acme/readme'], parent);
  t.is(result.code, 0, result.stderr);
  const readme = readFileSync(join(dir, 'README.md'), 'utf8');
  t.true(readme.startsWith('# @acme/readme\n'));
  t.false(readme.includes('{{'));
  for (const line of [
    /^npm install && npm start /m,
    /^npm test /m,
    /^npx backplane accounts create --email \S+ --role platform_admin$/m,
    /npx backplane token issue/,
    /migrations\//,
    /upgrade/,
  ]) {
    t.regex(readme, line);
  }
  // The commands it names are the application's scripts.
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.truthy(pkg.scripts.start && pkg.scripts.test);
});

test('new defaults the dependency to ^this version from the registry; --no-git and --name', async (t) => {
  const dir = join(parent, 'plain');
  const result = await backplane(['new', dir, '--no-git', '--name', '@acme/orders'], parent);
  t.is(result.code, 0, result.stderr);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
  t.is(pkg.name, '@acme/orders');
  t.is(pkg.dependencies.backplane, `^${version}`);
  t.false(existsSync(join(dir, '.git')));
});

test('new refuses a folder that is not empty, in one line with exit 1, and writes nothing', async (t) => {
  const dir = join(parent, 'taken');
  mkdirSync(dir);
  writeFileSync(join(dir, 'notes.txt'), 'mine');
  const result = await backplane(['new', dir], parent);
  t.is(result.code, 1);
  t.is(result.stderr.trim().split('\n').length, 1);
  t.false(existsSync(join(dir, 'package.json')));
});

test('new refuses a name npm would refuse (exit 2) and needs DIR', async (t) => {
  t.is((await backplane(['new', join(parent, 'named'), '--name', 'Not A Name'], parent)).code, 2);
  t.is((await backplane(['new'], parent)).code, 2);
  t.false(existsSync(join(parent, 'named')));
});

/** Every file `new` wrote under dir, relative to it. */
const writtenFiles = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(dir, file)).isFile());

test('new refuses a --package npm would refuse (a JSON injection, a quote, a backslash, a line break, nothing) with exit 2 in one line, and writes nothing', async (t) => {
  const hostile = '1.0.0"}, "scripts": {"postinstall": "id"}, "z": {"a": "';
  for (const spec of [hostile, 'a"b', 'a\\b', '1.0.0\n"scripts"', '', '  ']) {
    const dir = join(parent, 'refused');
    const result = await backplane(['new', dir, '--no-git', '--package', spec], parent);
    t.is(result.code, 2, JSON.stringify(spec));
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    t.regex(result.stderr, /^backplane: --package /);
    t.notRegex(result.stderr, /\n\s+at /);
    t.false(existsSync(dir), JSON.stringify(spec));
  }
});

test('new accepts a range, a tag, a tarball path and a file: spec; package.json and backplane.lock hold it as one JSON string', async (t) => {
  const tarball = join(parent, 'backplane 1.0.0 "quoted".tgz');
  writeFileSync(tarball, '');
  const specs = [
    ['>=0.6.0 <0.8.0', '>=0.6.0 <0.8.0'],
    ['next', 'next'],
    [tarball, `file:${tarball}`],
    [`file:${tarball}`, `file:${tarball}`],
  ] as const;
  for (const [index, [spec, expected]] of specs.entries()) {
    const dir = join(parent, `accepted-${index}`);
    const result = await backplane(['new', dir, '--no-git', '--name', 'accepted', '--package', spec], parent);
    t.is(result.code, 0, result.stderr);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    t.is(pkg.dependencies.backplane, expected);
    t.is(pkg.name, 'accepted');
    t.deepEqual(Object.keys(pkg.scripts).sort(), ['backplane', 'build', 'start', 'test', 'typecheck']);
    t.like(JSON.parse(readFileSync(join(dir, 'backplane.lock'), 'utf8')) as object, { package: expected });
    for (const file of writtenFiles(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      t.false(text.includes('{{'), file);
      if (file.endsWith('.json')) {
        t.notThrows(() => JSON.parse(text), file);
      }
    }
  }
});

test('a scoped name gives the deploy files a DNS label: the namespace, image and host parse as YAML', async (t) => {
  const dir = join(parent, 'scoped');
  const result = await backplane(['new', dir, '--no-git', '--name', '@acme/orders.api'], parent);
  t.is(result.code, 0, result.stderr);
  const overlay = join(dir, 'deploy', 'kubernetes', 'overlays', 'production');
  const kustomization = parse(readFileSync(join(overlay, 'kustomization.yaml'), 'utf8')) as { namespace: string; images: Array<{ newName: string }> };
  t.is(kustomization.namespace, 'orders-api');
  t.is(kustomization.images[0]!.newName, 'registry.example.com/orders-api');
  t.like(parse(readFileSync(join(overlay, 'namespace.yaml'), 'utf8')) as object, { metadata: { name: 'orders-api' } });
  t.true(readFileSync(join(dir, 'src', 'application.ts'), 'utf8').includes("name: '@acme/orders.api'"));
});

test('new onto a symbolic link that leads nowhere answers in one line (exit 1), not with a stack', async (t) => {
  const link = join(parent, 'dangling');
  symlinkSync(join(parent, 'no-such-folder'), link);
  const result = await backplane(['new', link, '--no-git'], parent);
  t.is(result.code, 1);
  t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  t.regex(result.stderr, /symbolic link to .*no-such-folder, which does not exist/);
  t.false(existsSync(join(parent, 'no-such-folder')));
});
