import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { root } from '../support/cluster.ts';

const lint = (...folders: string[]) => spawnSync(process.execPath, [join(root, 'scripts', 'lint-migrations.mjs'), ...folders], { encoding: 'utf8' });

function folderWith(name: string, sql: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'backplane-migration-lint-'));
  writeFileSync(join(dir, name), sql);
  return dir;
}

test('the shipped migrations pass: landed ones are the baseline, added ones are linted', (t) => {
  const result = lint();
  t.is(result.status, 0, result.stdout + result.stderr);
});

test('a new migration that builds an index without CONCURRENTLY fails the lint', (t) => {
  const dir = folderWith('20990101000100_index_audit_user_agent.sql', 'create index audit_events_user_agent_idx on audit_events (user_agent);\n');
  try {
    const result = lint(dir);
    t.is(result.status, 1);
    t.regex(result.stdout + result.stderr, /require-concurrent-index-creation/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the same index built CONCURRENTLY in a no-transaction migration passes; without IF NOT EXISTS it fails (a rerun must be safe)', (t) => {
  const good = folderWith(
    '20990101000100_index_audit_user_agent.sql',
    '-- backplane:no-transaction\ncreate index concurrently if not exists audit_events_user_agent_idx on audit_events (user_agent);\n',
  );
  const fragile = folderWith(
    '20990101000100_index_audit_user_agent.sql',
    '-- backplane:no-transaction\ncreate index concurrently audit_events_user_agent_idx on audit_events (user_agent);\n',
  );
  try {
    t.is(lint(good).status, 0);
    t.is(lint(fragile).status, 1);
  } finally {
    rmSync(good, { recursive: true, force: true });
    rmSync(fragile, { recursive: true, force: true });
  }
});
