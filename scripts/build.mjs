// Compiles src/ to dist/ and records what git says of this build (commit, time, uncommitted changes).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const git = (args) => {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
const commit = git(['rev-parse', 'HEAD']);
const info = {
  commit,
  buildTime: new Date().toISOString(),
  modified: commit !== undefined && (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
};
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify(info) + '\n');
chmodSync(join(root, 'dist', 'cli.js'), 0o755);
