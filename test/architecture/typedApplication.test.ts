import test from 'ava';
import { execFile } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

// The application `backplane new` makes (templates/app) lives on the public surface alone (issue 46):
// its example module imports only what its package.json declares, casts nothing, and the compiler
// refuses a route whose permission or problem code its module does not declare.
const root = join(import.meta.dirname, '..', '..');
const template = join(root, 'templates', 'app');
const moduleFolder = join(template, 'src', 'modules', 'notes');

/** The example module's source files, tests left out, by path under the module's folder. */
const moduleSources = () =>
  readdirSync(moduleFolder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => ({ file, source: readFileSync(join(moduleFolder, file), 'utf8') }));

test('the example module imports only the packages the application declares', (t) => {
  const manifest = JSON.parse(readFileSync(join(template, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  // `backplane new` adds backplane itself to the dependencies.
  const declared = new Set(['backplane', ...Object.keys(manifest.dependencies)]);
  const builtins = new Set(builtinModules);
  for (const { file, source } of moduleSources()) {
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      if (fileName.startsWith('.') || fileName.startsWith('node:') || builtins.has(fileName)) {
        continue;
      }
      const name = fileName.startsWith('@') ? fileName.split('/').slice(0, 2).join('/') : fileName.split('/')[0]!;
      t.true(declared.has(name), `${file} imports ${fileName}, which the template's package.json does not declare`);
    }
  }
});

test('the example module casts nothing', (t) => {
  for (const { file, source } of moduleSources()) {
    const casts: string[] = [];
    const visit = (node: ts.Node): void => {
      if ((ts.isAsExpression(node) && node.type.getText() !== 'const') || ts.isTypeAssertionExpression(node)) {
        casts.push(node.getText());
      }
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
    t.deepEqual(casts, [], file);
  }
});

test('the example module looks no module up by a string: what it needs comes typed from its context', (t) => {
  for (const { file, source } of moduleSources()) {
    t.notRegex(source, /\.use(<[^>]*>)?\(\s*['"`]/, file);
  }
});

/** A copy of the template's src/ importing this repository's src/ for `backplane`, with `edit` applied to the module's routes. */
function copyApplication(folder: string, name: string, edit: (routes: string) => string): void {
  const target = join(folder, name);
  cpSync(join(template, 'src'), target, { recursive: true, filter: (path) => !path.endsWith('.test.ts') });
  for (const file of readdirSync(target, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.ts'))) {
    const path = join(target, file);
    const up = '../'.repeat(file.split('/').length + 3);
    const source = readFileSync(path, 'utf8').replaceAll("from 'backplane'", `from '${up}src/index.ts'`);
    writeFileSync(path, file === join('modules', 'notes', 'routes.ts') ? edit(source) : source);
  }
}

test('an application compiles as the guide shows it, and a typo in a permission or a problem code does not', async (t) => {
  // Under node_modules, where zod and pg resolve as they do in an application.
  mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
  const folder = mkdtempSync(join(root, 'node_modules', '.cache', 'application-check-'));
  try {
    const replace = (from: string, to: string) => (routes: string) => {
      t.true(routes.includes(from), `the example's routes have ${from}`);
      return routes.replace(from, to);
    };
    copyApplication(folder, 'shipped', (routes) => routes);
    copyApplication(folder, 'permission', replace("permission: 'notes.read'", "permission: 'notes.raed'"));
    copyApplication(folder, 'problem', replace("problems: ['note_not_found']", "problems: ['note_not_fuond']"));
    // The repository's compiler options (its src/ is compiled with them); its own declarations of untyped packages.
    const include = ['shipped/application.ts', 'permission/application.ts', 'problem/application.ts', '../../../src/types/*.d.ts'];
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ extends: '../../../tsconfig.json', compilerOptions: { noUnusedLocals: false }, include }));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await promisify(execFile)(process.execPath, [tsc, '-p', folder], { maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    const errorsIn = (name: string) =>
      output
        .split(/\n(?=\S)/)
        .filter((block) => block.includes(`/${name}/`) && /error TS\d+/.test(block))
        .join('\n');
    t.is(errorsIn('shipped'), '', output);
    t.regex(errorsIn('permission'), /notes\.raed/);
    t.regex(errorsIn('problem'), /note_not_fuond/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
