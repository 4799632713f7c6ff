import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/app/config.ts';

const KEY = 'ab'.repeat(32);
const dir = mkdtempSync(join(tmpdir(), 'backplane-secret-files-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A secret file of the test's own, with the mode a Secret volume or an operator would give it. */
function secretFile(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

test('an empty, blank or line-break-only secret file stops start-up naming the variable and the file, also outside production', (t) => {
  for (const [name, text] of [
    ['empty', ''],
    ['newline', '\n'],
    ['blank', ' \t \r\n  \n'],
  ]) {
    const path = secretFile(name, text);
    const error = t.throws(() => loadConfig({ APP_ENCRYPTION_KEY_FILE: path }), { instanceOf: ConfigError }, name);
    t.is(error.message, `APP_ENCRYPTION_KEY_FILE: ${path} is empty: write the secret into it, or unset APP_ENCRYPTION_KEY_FILE`);
  }
  // The same for every secret variable, not only the key.
  t.throws(() => loadConfig({ DATABASE_URL_FILE: secretFile('url', '\n') }), { instanceOf: ConfigError, message: /^DATABASE_URL_FILE: .*url is empty/ });
});

test('a missing secret file, or a folder in its place, stops start-up naming the variable, the file and why', (t) => {
  const missing = join(dir, 'missing');
  t.throws(() => loadConfig({ APP_ENCRYPTION_KEY_FILE: missing }), {
    instanceOf: ConfigError,
    message: `APP_ENCRYPTION_KEY_FILE: cannot read ${missing}: it does not exist`,
  });
  const folder = join(dir, 'folder');
  mkdirSync(folder);
  t.throws(() => loadConfig({ PGPASSWORD_FILE: folder }), {
    instanceOf: ConfigError,
    message: `PGPASSWORD_FILE: cannot read ${folder}: it is a folder, not a file`,
  });
});

test('a trailing line break is dropped as before; the text inside is kept', (t) => {
  t.is(loadConfig({ APP_ENCRYPTION_KEY_FILE: secretFile('crlf', `${KEY}\r\n`) }).encryptionKey, KEY);
  t.is(loadConfig({ APP_ENCRYPTION_KEY_FILE: secretFile('plain', KEY) }).encryptionKey, KEY);
});

test("a secret file any user may read is a warning naming the variable and the file, never the secret; the service's user or group alone is fine", (t) => {
  const open = secretFile('open-key', `${KEY}\n`, 0o644);
  const config = loadConfig({ APP_ENCRYPTION_KEY_FILE: open });
  t.is(config.encryptionKey, KEY);
  t.is(config.warnings.length, 1);
  t.regex(config.warnings[0]!, new RegExp(`^APP_ENCRYPTION_KEY_FILE: ${open} is readable by every user \\(mode 0644\\)`));
  t.false(config.warnings[0]!.includes(KEY));
  t.false(config.warnings[0]!.includes('\n'));
  t.deepEqual(loadConfig({ APP_ENCRYPTION_KEY_FILE: secretFile('group-key', KEY, 0o440) }).warnings, []);
  // A mounted Secret is a symbolic link (mode 0777) to the file: the file's mode counts.
  const link = join(dir, 'linked-key');
  symlinkSync(secretFile('target-key', KEY, 0o400), link);
  t.deepEqual(loadConfig({ APP_ENCRYPTION_KEY_FILE: link }).warnings, []);
  t.deepEqual(loadConfig({ APP_ENCRYPTION_KEY: KEY }).warnings, []);
});

test("a provider's client_secret_file of blanks is refused like an empty one", (t) => {
  const entry = { name: 'acme', issuer: 'https://id.example.com', client_id: 'backplane', client_secret_file: secretFile('client-secret', '   \n') };
  t.throws(() => loadConfig({ APP_OIDC_PROVIDERS: JSON.stringify([entry]) }), {
    instanceOf: ConfigError,
    message: /client_secret_file: cannot read .*, or it is empty/,
  });
});
