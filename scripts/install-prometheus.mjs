// Makes sure the Prometheus test (test/deploy/prometheus.test.ts) has a Prometheus server: Debian's
// `prometheus`, installed with apt-get when missing and this runs as root. It never fails the run:
// without it that test skips and says why.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// test/support/prometheus.ts looks in the same place.
const PROMETHEUS = '/usr/bin/prometheus';

if (existsSync(PROMETHEUS)) {
  console.log(`prometheus: ${PROMETHEUS}`);
} else if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
  console.log('prometheus: missing, and installing it needs root and apt-get: the Prometheus test will skip (apt-get install prometheus)');
} else {
  console.log('prometheus: missing, installing it with apt-get');
  // The package's service is never started here: the test runs its own server on a free port.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
  const apt = (args) => spawnSync('apt-get', args, { stdio: 'inherit', env }).status === 0;
  if (!(apt(['update']) && apt(['install', '-y', '--no-install-recommends', 'prometheus']) && existsSync(PROMETHEUS))) {
    console.log('prometheus: apt-get could not install it: the Prometheus test will skip');
  }
}
