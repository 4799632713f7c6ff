import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './cluster.ts';

/**
 * The release before this one's migrations and issue 30's changes (main at "Add semver", before
 * the key sealing, token epochs and purge ledger migrations): what a rolling upgrade replaces.
 */
export const PREVIOUS_RELEASE = '19ef7988cdf51f7cb03d276738c6ba03c6b0a5ee';

/**
 * The previous release's CLI, its source from `git archive` in the temporary folder with this
 * checkout's node_modules, run through tsx as the tests run this release's (a tsc build took 90 s
 * on a loaded machine, half the test's time budget); kept there between runs. Needs the commit in
 * the git history.
 */
export function previousReleaseCli(commit = PREVIOUS_RELEASE): string {
  const dir = join(tmpdir(), `backplane-release-${commit.slice(0, 12)}`);
  const cli = join(dir, 'src', 'cli.ts');
  if (existsSync(cli)) {
    return cli;
  }
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    execFileSync('sh', ['-c', `git -C "$ROOT" archive "$COMMIT" | tar -x -C "$OUT"`], { env: { ...process.env, ROOT: root, COMMIT: commit, OUT: building }, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`cannot read commit ${commit} from git (a shallow clone? fetch the history): ${(error as Error).message}`);
  }
  symlinkSync(join(root, 'node_modules'), join(building, 'node_modules'));
  // Another test process may have finished first: either build is the same.
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
  return cli;
}
