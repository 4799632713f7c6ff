// `npx backplane` inside an application runs the application's command line (its package.json's
// backplane.entry, through its own tsx, or the built entry); elsewhere, and for new and upgrade,
// Backplane alone. A fixture application whose entry reports how it was run stands in for one.
import test, { type ExecutionContext } from 'ava';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backplane, root } from '../application/support.ts';

const REPORT =
  'const argv: string[] = process.argv.slice(2);\nconsole.log(JSON.stringify({ argv, entry: process.argv[1], dataDir: process.env.APP_DATA_DIR }));\n';

/** A folder with an application's package.json; its entry and tsx as given. */
function application(t: ExecutionContext, files: Record<string, string>, options: { tsx: boolean; pkg?: object } = { tsx: true }): string {
  const dir = mkdtempSync(join(tmpdir(), 'backplane-app-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pkg = options.pkg ?? {
    name: 'fixture-app',
    type: 'module',
    dependencies: { backplane: '*' },
    backplane: { entry: 'src/main.ts', builtEntry: 'dist/main.js' },
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  if (options.tsx) {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(root, 'node_modules', 'tsx'), join(dir, 'node_modules', 'tsx'));
  }
  return dir;
}

const oneLine = (t: ExecutionContext, stderr: string) => t.is(stderr.trim().split('\n').length, 1, stderr);

test('inside an application, from any folder of it, every command runs its entry through its tsx, with its data folder', async (t) => {
  const dir = application(t, { 'src/main.ts': REPORT });
  const ran = await backplane(['jobs', 'list', '--json'], join(dir, 'src'), { APP_DATA_DIR: undefined });
  t.is(ran.code, 0, ran.stderr);
  t.deepEqual(JSON.parse(ran.stdout), { argv: ['jobs', 'list', '--json'], entry: join(dir, 'src', 'main.ts'), dataDir: join(dir, '.data') });
});

test('an application that fails to load is refused in one line naming it: exit 2 for a composition refusal, 1 for its code failing', async (t) => {
  const source = join(root, 'src', 'index.ts');
  for (const [main, code, said] of [
    [
      `import { backplaneModules, defineApplication } from '${source}';\ndefineApplication({ name: 'fixture-app', modules: [...backplaneModules, backplaneModules[0]!] });\n`,
      2,
      /module \w+ is listed twice/,
    ],
    ["throw new Error('the notes store did not open');\n", 1, /the notes store did not open/],
    ['const broken: = 1;\n', 1, /Transform failed/],
  ] as const) {
    const dir = application(t, { 'src/main.ts': main });
    const ran = await backplane(['jobs', 'list'], dir);
    t.is(ran.code, code, ran.stderr);
    oneLine(t, ran.stderr);
    t.regex(ran.stderr, /^backplane: the application in \S+ did not load \(src\/main\.ts\): /);
    t.regex(ran.stderr, said);
  }
});

test('without tsx the built entry runs; with neither, one line says what to do, exit 2', async (t) => {
  const built = application(t, { 'src/main.ts': REPORT, 'dist/main.js': 'console.log(JSON.stringify(process.argv.slice(2)));\n' }, { tsx: false });
  const ran = await backplane(['roles', 'list'], built);
  t.is(ran.code, 0, ran.stderr);
  t.deepEqual(JSON.parse(ran.stdout), ['roles', 'list']);

  const neither = application(t, { 'src/main.ts': REPORT }, { tsx: false });
  const refused = await backplane(['roles', 'list'], neither);
  t.is(refused.code, 2);
  oneLine(t, refused.stderr);
  t.regex(
    refused.stderr,
    /^backplane: the application in \S+ cannot run its command line: src\/main\.ts needs tsx \(npm install\) and dist\/main\.js is not built \(npm run build\)$/m,
  );
});

test('new and upgrade, and folders that are no application, run Backplane alone', async (t) => {
  const dir = application(t, { 'src/main.ts': REPORT });
  const upgrade = await backplane(['upgrade', '--help'], dir);
  t.is(upgrade.code, 0, upgrade.stderr);
  t.regex(upgrade.stdout, /^usage: backplane upgrade/);
  const plain = application(t, {}, { tsx: false, pkg: { name: 'not-an-application', dependencies: { zod: '*' } } });
  const help = await backplane(['--help'], plain);
  t.is(help.code, 0, help.stderr);
  t.regex(help.stdout, /^usage: backplane <command>/);
});
