// The suite (or the files named) beside one busy process per core, as a loaded CI machine runs
// it: assertions that hold only on a quiet machine fail here. Arguments go to `npm test`.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cores = availableParallelism();
const hogs = Array.from({ length: cores }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopHogs = () => hogs.forEach((hog) => hog.kill('SIGKILL'));
process.on('exit', stopHogs);
console.log(`== ${cores} busy processes beside the suite (one per core)`);

const suite = spawn(process.execPath, [join(root, 'scripts', 'test.mjs'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => suite.kill(signal));
}
suite.on('exit', (code, signal) => {
  stopHogs();
  process.exit(code ?? (signal ? 1 : 0));
});
