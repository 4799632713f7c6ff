import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { RELEASES } from '../../src/commands/releases/notes.ts';
import { compareVersions, normalizeVersion } from '../../src/commands/upgradeVersions.ts';
import { packageRoot } from '../../src/platform/packageRoot.ts';

const changelog = readFileSync(join(packageRoot, 'CHANGELOG.md'), 'utf8');

/** The rows of the "Upgrade actions" table under a release's heading, as [change, action]. */
function actionsTable(heading: string): Array<[string, string]> {
  const section = changelog.slice(changelog.indexOf(`\n${heading}`));
  const table = section.slice(section.indexOf('### Upgrade actions'));
  const lines = table.split('\n');
  const start = lines.findIndex((line) => line.startsWith('| '));
  const end = lines.findIndex((line, index) => index > start && !line.startsWith('|'));
  const rows = lines.slice(start + 2, end);
  return rows.map((line) => line.slice(2, -2).split(' | ') as [string, string]);
}

const notes = (version: string) => RELEASES.find((release) => release.version === version)!.changes.map((change) => [change.change, change.action]);

test('CHANGELOG carries the release notes upgrade shows: the v0.5 table and the unreleased one', (t) => {
  t.deepEqual(actionsTable('## [v0.5]'), notes('0.5.0'));
  t.deepEqual(actionsTable('## [Unreleased]'), notes('0.6.0-dev'));
});

test('release notes name semver releases, oldest first, as upgrade compares them', (t) => {
  const versions = RELEASES.map((release) => release.version);
  t.deepEqual(
    versions.map((version) => normalizeVersion(version)),
    versions,
  );
  t.deepEqual([...versions].sort(compareVersions), versions);
});
