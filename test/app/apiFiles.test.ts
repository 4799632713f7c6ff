import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderApiFiles } from '../../src/app/apiFiles.ts';

const root = join(import.meta.dirname, '..', '..');

test('the committed api/ files are what the generator makes now (run: npx backplane openapi)', async (t) => {
  for (const [name, content] of Object.entries(await renderApiFiles())) {
    const committed = readFileSync(join(root, 'api', name), 'utf8');
    t.is(committed, content, `api/${name} is stale: run \`npm run build && npx backplane openapi\``);
  }
});

test('every /ops operation declares bearer security, its permission, 401 and 403', async (t) => {
  const document = JSON.parse((await renderApiFiles())['openapi.json']!) as { paths: Record<string, Record<string, any>> };
  const ops = Object.entries(document.paths).filter(([path]) => path.startsWith('/ops/'));
  t.true(ops.length > 0);
  for (const [path, operations] of ops) {
    for (const [method, operation] of Object.entries(operations)) {
      t.deepEqual(operation.security, [{ bearer: [] }], `${method} ${path}`);
      t.truthy(operation['x-permission'], `${method} ${path}`);
      t.truthy(operation.responses['401'], `${method} ${path}`);
      t.truthy(operation.responses['403'], `${method} ${path}`);
    }
  }
});
