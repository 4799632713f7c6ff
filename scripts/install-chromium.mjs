// Makes sure the browser tests (test/browser/) have a headless Chromium: Debian's `chromium`,
// installed with apt-get when missing and this runs as root. It never fails the run: without a
// browser those tests skip and say why.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// test/support/browser.ts looks in the same places.
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

const found = () => CHROMIUM_CANDIDATES.find((path) => existsSync(path));

if (found()) {
  console.log(`chromium: ${found()}`);
} else if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
  console.log('chromium: missing, and installing it needs root and apt-get: the browser tests will skip (apt-get install chromium)');
} else {
  console.log('chromium: missing, installing it with apt-get');
  const apt = (args) => spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
  if (!(apt(['update']) && apt(['install', '-y', '--no-install-recommends', 'chromium']) && found())) {
    console.log('chromium: apt-get could not install it: the browser tests will skip');
  }
}
