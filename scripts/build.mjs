// Compiles src/ to dist/ and records what git says of this build (commit, time, uncommitted changes).
// An image build has no .git: it passes BUILD_COMMIT and BUILD_TIME (deploy/Dockerfile's build arguments).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
// Declarations name their imports as the sources do (.ts); an application resolves the .js beside each .d.ts.
for (const file of readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.d.ts'))) {
  const path = join(root, 'dist', file);
  writeFileSync(
    path,
    readFileSync(path, 'utf8')
      .replace(/(from\s+'\.{1,2}\/[^']*)\.ts'/g, "$1.js'")
      .replace(/(import\('\.{1,2}\/[^']*)\.ts'\)/g, "$1.js')"),
  );
}
// One entry for the surface's report (api/library.api.md): `backplane`, and `backplane/testing` as `testing`.
writeFileSync(join(root, 'dist', 'library.d.ts'), "export * from './index.js';\nexport * as testing from './testing.js';\n");
const given = process.env.BUILD_COMMIT || undefined;
const commit = given ?? git(['rev-parse', 'HEAD']);
const info = {
  commit,
  buildTime: process.env.BUILD_TIME || new Date().toISOString(),
  modified: given === undefined && commit !== undefined && (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
};
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify(info) + '\n');
chmodSync(join(root, 'dist', 'cli.js'), 0o755);
// The browser pages' files are served as they are: tsc compiles only src/console/sites.ts.
for (const folder of ['app', 'docs']) {
  cpSync(join(root, 'src', 'console', folder), join(root, 'dist', 'console', folder), { recursive: true });
}
