import test from 'ava';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { sourceFiles, src } from '../support/sourceTree.ts';

// Module boundaries (ADR 0006, ADR 0120): a capability is used only through its index.ts, the
// platform knows no capability, and use cases know nothing of HTTP. Imports are read by the
// TypeScript compiler (any quote style, `export ... from`, dynamic import()), not by a pattern.

interface Import {
  from: string;
  /** Relative to src/ for the tree's own files; the package name otherwise. */
  to: string;
}

/** What a file imports, as the compiler sees it: static imports, re-exports and import() calls. */
export function importsOf(file: string, text: string): Import[] {
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => ({
    from: relative(src, file),
    to: fileName.startsWith('.') ? relative(src, resolve(dirname(file), fileName)) : fileName,
  }));
}

const imports = (): Import[] => sourceFiles(src).flatMap((file) => importsOf(file, readFileSync(file, 'utf8')));

const moduleOf = (path: string) => /^modules\/([^/]+)\//.exec(path)?.[1];
const layerOf = (path: string) => path.split('/')[0];

/**
 * A module's files that speak HTTP: its index.ts (which hands routes to the application), its
 * routes (routes.ts, *Routes.ts), their schemas (schemas.ts), its middleware (middleware.ts) and
 * auth's route guard (guard.ts). Every other file of a module is a use case or its store.
 */
const HTTP_FILE = /(^|\/)(index|routes|[a-zA-Z]+Routes|schemas|middleware|guard)\.ts$/;
export const isUseCase = (path: string) => moduleOf(path) !== undefined && !HTTP_FILE.test(path);
const speaksHttp = (to: string) => to === 'koa' || to.startsWith('@koa/') || to.startsWith('platform/http/');

test('imports are read in any quote style, from re-exports and from dynamic import()', (t) => {
  const text = `import a from "./a.ts";\nexport { b } from '../b.ts';\nconst c = await import(\`./c.ts\`);\nimport type { D } from 'koa';\n`;
  t.deepEqual(
    importsOf(join(src, 'modules/x/y.ts'), text).map(({ to }) => to),
    ['modules/x/a.ts', 'modules/b.ts', 'modules/x/c.ts', 'koa'],
  );
});

test('the platform imports no module, no app code and no command', (t) => {
  const crossing = imports().filter(
    ({ from, to }) => layerOf(from) === 'platform' && ['modules', 'app', 'commands', 'console', 'testing'].includes(layerOf(to)!),
  );
  t.deepEqual(crossing, []);
});

test('a module imports another module only through its index.ts, and never app code or commands', (t) => {
  const crossing = imports().filter(({ from, to }) => {
    const owner = moduleOf(from);
    if (!owner) {
      return false;
    }
    if (layerOf(to) === 'app' || layerOf(to) === 'commands' || layerOf(to) === 'testing') {
      return true;
    }
    const target = moduleOf(to);
    return target !== undefined && target !== owner && !to.endsWith(`modules/${target}/index.ts`);
  });
  t.deepEqual(crossing, []);
});

test('app code, commands, pages and backplane/testing use a module only through its index.ts', (t) => {
  const crossing = imports().filter(
    ({ from, to }) => !moduleOf(from) && layerOf(from) !== 'platform' && moduleOf(to) && !to.endsWith(`modules/${moduleOf(to)}/index.ts`),
  );
  t.deepEqual(crossing, []);
});

test('use cases import neither Koa nor platform/http: only routes, schemas, middleware and index.ts speak HTTP', (t) => {
  t.true(isUseCase('modules/settings/service.ts'));
  t.false(isUseCase('modules/auth/signInRoutes.ts'));
  const crossing = imports().filter(({ from, to }) => isUseCase(from) && speaksHttp(to));
  t.deepEqual(crossing, []);
});

/** What a file imports to run: `import type` and `export type` are left out (they need no module created first). */
export function runtimeImportsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const typeOnly = new Set<string>();
  for (const statement of source.statements) {
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
    const onlyTypes =
      clause !== undefined
        ? clause.isTypeOnly || (!clause.name && named !== undefined && named.every((element) => element.isTypeOnly))
        : ts.isExportDeclaration(statement) && statement.isTypeOnly;
    const specifier = ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (onlyTypes && specifier && ts.isStringLiteral(specifier)) {
      typeOnly.add(specifier.text);
    }
  }
  return importsOf(file, text).filter(({ to }) => ![...typeOnly].some((specifier) => relative(src, resolve(dirname(file), specifier)) === to));
}

// Created after the module that uses it (`later`): retention reads the jobs module's status of its job.
const LATER = new Set(['retention → jobs']);

test("a module uses another one's code only when it names it in its needs", async (t) => {
  const { backplaneModules } = await import('../../src/app/backplaneModules.ts');
  const needs = new Map(backplaneModules.map((module) => [module.name, new Set(module.needs ?? [])]));
  const unnamed = sourceFiles(src)
    .flatMap((file) => runtimeImportsOf(file, readFileSync(file, 'utf8')))
    .flatMap(({ from, to }) => {
      const [owner, target] = [moduleOf(from), moduleOf(to)];
      return owner && target && owner !== target && !needs.get(owner)?.has(target) && !LATER.has(`${owner} → ${target}`) ? [`${from} → ${to}`] : [];
    });
  t.deepEqual(unnamed, []);
  t.true(needs.size === 11, 'every folder of src/modules is a module of backplaneModules');
});
