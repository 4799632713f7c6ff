import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Module boundaries (ADR 0006): a capability is used only through its
// index.ts, and the platform knows no capability.
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

/** Every relative import of the source tree, as paths relative to src/. */
function imports(): Array<{ from: string; to: string }> {
  return sourceFiles(src).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(IMPORT)]
      .map((match) => match[1] ?? match[2]!)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({ from: relative(src, file), to: relative(src, resolve(dirname(file), specifier)) })),
  );
}

const moduleOf = (path: string) => /^modules\/([^/]+)\//.exec(path)?.[1];
const layerOf = (path: string) => path.split('/')[0];

test('the platform imports no module, no app code and no command', (t) => {
  const crossing = imports().filter(({ from, to }) => layerOf(from) === 'platform' && layerOf(to) !== 'platform');
  t.deepEqual(crossing, []);
});

test('a module imports another module only through its index.ts, and never app code or commands', (t) => {
  const crossing = imports().filter(({ from, to }) => {
    const owner = moduleOf(from);
    if (!owner) {
      return false;
    }
    if (layerOf(to) === 'app' || layerOf(to) === 'commands') {
      return true;
    }
    const target = moduleOf(to);
    return target !== undefined && target !== owner && !to.endsWith(`modules/${target}/index.ts`);
  });
  t.deepEqual(crossing, []);
});

test('app code, commands and pages use a module only through its index.ts', (t) => {
  const crossing = imports().filter(({ from, to }) => !moduleOf(from) && layerOf(from) !== 'platform' && moduleOf(to) && !to.endsWith(`modules/${moduleOf(to)}/index.ts`));
  t.deepEqual(crossing, []);
});
