import test from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..', '..');
const example = join(root, 'templates', 'app', 'src', 'modules', 'notes');

/** A copy of the template's example module importing this repository's src/ for `backplane`, with `edit` applied to its routes. */
function copyExample(folder: string, name: string, edit: (routes: string) => string): void {
  const target = join(folder, name);
  cpSync(example, target, { recursive: true });
  for (const file of readdirSync(target, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.ts'))) {
    const path = join(target, file);
    const depth = file.split('/').length;
    const source = readFileSync(path, 'utf8').replaceAll("from 'backplane'", `from '${'../'.repeat(depth + 3)}src/index.ts'`);
    writeFileSync(path, file === 'routes.ts' ? edit(source) : source);
  }
}

test("the example module compiles as documented, and a typo in a route's permission does not", async (t) => {
  // Under node_modules, where zod and pg resolve as they do in an application.
  mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
  const folder = mkdtempSync(join(root, 'node_modules', '.cache', 'module-check-'));
  try {
    const replace = (from: string, to: string) => (routes: string) => {
      t.true(routes.includes(from), `the example's routes have ${from}`);
      return routes.replace(from, to);
    };
    copyExample(folder, 'shipped', (routes) => routes);
    copyExample(folder, 'permission', replace("permission: 'notes.write'", "permission: 'notes.wirte'"));
    // The repository's compiler options; its own declarations of untyped packages.
    const include = ['shipped/index.ts', 'permission/index.ts', '../../../src/types/*.d.ts'];
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ extends: '../../../tsconfig.json', compilerOptions: { noUnusedLocals: false }, include }));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await promisify(execFile)(process.execPath, [tsc, '-p', folder], { maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    const errorsIn = (name: string) =>
      output
        .split(/\n(?=\S)/)
        .filter((block) => block.includes(`${name}/`) && /error TS\d+/.test(block))
        .join('\n');
    t.is(errorsIn('shipped'), '', output);
    t.regex(errorsIn('permission'), /notes\.wirte/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
