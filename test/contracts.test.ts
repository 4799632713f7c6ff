import test from 'ava';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const local = join(import.meta.dirname, 'contracts');
const shared = join(import.meta.dirname, '..', '..', 'shared', 'contracts');

test('the contract copies equal the shared ones, where shared/ is beside the checkout', (t) => {
  if (!existsSync(shared)) {
    t.log('no ../shared/contracts beside this checkout; the committed copies are used');
    t.pass();
    return;
  }
  for (const name of readdirSync(shared)) {
    t.is(readFileSync(join(local, name), 'utf8'), readFileSync(join(shared, name), 'utf8'), name);
  }
});
