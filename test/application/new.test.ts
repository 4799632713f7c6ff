import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string>; scripts: Record<string, string> };
  t.is(pkg.name, 'my-service');
  t.is(pkg.dependencies.backplane, `file:${tarball}`);
  t.truthy(pkg.scripts.start && pkg.scripts.test);
  for (const file of ['tsconfig.json', 'src/main.ts', 'src/modules/notes/index.ts', '.gitignore', 'deploy/Dockerfile', 'deploy/kubernetes/overlays/production/kustomization.yaml']) {
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
