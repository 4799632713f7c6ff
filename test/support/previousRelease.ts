import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './cluster.ts';

/**
 * The release before this one's migrations and issue 30's changes (main at "Add semver", before
 * the key sealing, token epochs and purge ledger migrations): what a rolling upgrade replaces.
 */
export const PREVIOUS_RELEASE = '19ef7988cdf51f7cb03d276738c6ba03c6b0a5ee';

/**
 * The previous release's CLI, its source from `git archive` in the temporary folder with its own
 * dependencies, installed from its own lock (`npm ci`, no install scripts, from npm's cache when it
 * can: about 30 s), as a team running that release has them; run through tsx as the tests run this
 * release's (a tsc build took 90 s on a loaded machine). Kept there between runs. Needs the commit
 * in the git history.
 */
export function previousReleaseCli(commit = PREVIOUS_RELEASE): string {
  const dir = join(tmpdir(), `backplane-release-${commit.slice(0, 12)}`);
  const cli = join(dir, 'src', 'cli.ts');
  if (existsSync(join(dir, '.installed'))) {
    return cli;
  }
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    execFileSync('sh', ['-c', `git -C "$ROOT" archive "$COMMIT" | tar -x -C "$OUT"`], {
      env: { ...process.env, ROOT: root, COMMIT: commit, OUT: building },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new Error(`cannot read commit ${commit} from git (a shallow clone? fetch the history): ${(error as Error).message}`);
  }
  execFileSync('npm', ['ci', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error'], {
    cwd: building,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  writeFileSync(join(building, '.installed'), commit);
  // Another test process may have finished first: either copy is the same.
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
  return cli;
}
