// promtool without the Prometheus daemon: Debian's `prometheus` package, downloaded (not installed)
// and unpacked once into node_modules/.cache, so a fresh CI machine gets it by itself.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const cached = join(root, 'node_modules', '.cache', 'promtool', 'promtool');

function download(folder: string): void {
  try {
    execFileSync('apt-get', ['download', 'prometheus'], { cwd: folder, stdio: 'pipe' });
  } catch {
    // A fresh machine has no package lists yet.
    execFileSync('apt-get', ['update'], { stdio: 'pipe' });
    execFileSync('apt-get', ['download', 'prometheus'], { cwd: folder, stdio: 'pipe' });
  }
}

/** The path of a working promtool; throws (never skips) when it cannot be had. */
export function ensurePromtool(): string {
  // scripts/install-prometheus.mjs installs the whole package (the Prometheus test needs the server).
  if (existsSync('/usr/bin/promtool')) {
    return '/usr/bin/promtool';
  }
  if (existsSync(cached)) {
    return cached;
  }
  const work = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    download(work);
    const deb = readdirSync(work).find((name) => name.endsWith('.deb'));
    if (!deb) {
      throw new Error('apt-get download prometheus produced no .deb');
    }
    execFileSync('dpkg-deb', ['-x', join(work, deb), join(work, 'unpacked')], { stdio: 'pipe' });
    mkdirSync(join(cached, '..'), { recursive: true });
    copyFileSync(join(work, 'unpacked', 'usr', 'bin', 'promtool'), cached);
    execFileSync('chmod', ['755', cached]);
    return cached;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
