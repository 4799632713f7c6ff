import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
// @ts-expect-error -- a plain script, without declarations
import { libraryReport } from '../../scripts/library-report.mjs';

// The public surface of the `backplane` package (ADR 0121): recorded in api/library.api.md, and a
// release may only add to it. api/releases/ keeps the report of each release since v0.6.
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Each declaration of a report by name, as its lines (members one a line). */
export function declarations(report: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  for (const block of report.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() && !line.trim().startsWith('//'));
    const name = /(?:interface|type|function|class|const|namespace|enum)\s+([A-Za-z_$][\w$]*)/.exec(lines[0] ?? '')?.[1];
    if (name) {
      blocks.set(
        name,
        lines.map((line) => line.trim()),
      );
    }
  }
  return blocks;
}

/** What the current surface removed or changed of a release's: names gone, or lines of a declaration gone. */
export function incompatibilities(release: string, current: string): string[] {
  const now = declarations(current);
  return [...declarations(release)].flatMap(([name, lines]) => {
    const kept = now.get(name);
    if (!kept) {
      return [`${name} was removed`];
    }
    return lines.filter((line) => !kept.includes(line)).map((line) => `${name} changed: ${line}`);
  });
}

test('a removed name or a changed declaration is incompatible; an added member or name is not', (t) => {
  const release = '// @public\nexport interface A {\n    x: string;\n}\n\n// @public\nexport function f(a: string): void;\n';
  t.deepEqual(incompatibilities(release, release.replace('    x: string;', '    x: string;\n    y?: number;') + '\n// @public\nexport const g: number;\n'), []);
  t.deepEqual(incompatibilities(release, release.replace('export function f(a: string): void;\n', '')), ['f was removed']);
  t.deepEqual(incompatibilities(release, release.replace('x: string', 'x: number')), ['A changed: x: string;']);
});

test('no name a release exported is removed or changed without a major version', (t) => {
  const major = Number((JSON.parse(read('package.json')) as { version: string }).version.split('.')[0]);
  const current = read('api/library.api.md');
  for (const file of readdirSync(join(root, 'api', 'releases')).filter((name) => /^library-v\d+\.\d+\.api\.md$/.test(name))) {
    const releaseMajor = Number(/v(\d+)\./.exec(file)![1]);
    if (major > releaseMajor) {
      continue;
    }
    t.deepEqual(incompatibilities(read(join('api', 'releases', file)), current), [], `${file}: "only additions; nothing removed" (ADR 0121)`);
  }
});

test('api/library.api.md records the surface src/index.ts and src/testing.ts export', (t) => {
  const { succeeded, changed } = libraryReport({ check: true }) as { succeeded: boolean; changed: boolean };
  t.true(succeeded);
  t.false(changed, 'stale: run `npm run api:library` and commit api/library.api.md');
});
