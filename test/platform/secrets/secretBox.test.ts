import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSecretBox } from '../../../src/app/encryptionKey.ts';
import { ConfigError, loadConfig } from '../../../src/app/config.ts';
import { SecretBoxError, createSecretBox, parseEncryptionKeys } from '../../../src/platform/secrets/secretBox.ts';

const key = () => randomBytes(32);

test('a sealed value opens with its key and context only', (t) => {
  const box = createSecretBox([key()]);
  const sealed = box.seal('refresh-token-value', 'identity:acme:sub-1');
  t.false(sealed.includes('refresh-token-value'));
  t.is(box.open(sealed, 'identity:acme:sub-1'), 'refresh-token-value');
  t.throws(() => box.open(sealed, 'identity:acme:sub-2'), { instanceOf: SecretBoxError });
  t.throws(() => createSecretBox([key()]).open(sealed, 'identity:acme:sub-1'), { instanceOf: SecretBoxError });
  t.throws(() => box.open('garbage', 'x'), { instanceOf: SecretBoxError });
  const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
  t.throws(() => box.open(tampered, 'identity:acme:sub-1'), { instanceOf: SecretBoxError });
});

test('the first key seals, every key opens: rotation', (t) => {
  const [older, newer] = [key(), key()];
  const sealedBefore = createSecretBox([older]).seal('s', 'c');
  const rotated = createSecretBox([newer, older]);
  t.is(rotated.open(sealedBefore, 'c'), 's');
  t.is(rotated.open(rotated.seal('t', 'c'), 'c'), 't');
});

test('keys are parsed from base64 or hex, and refused otherwise', (t) => {
  const k = key();
  t.deepEqual(parseEncryptionKeys(k.toString('base64')), [k]);
  t.deepEqual(parseEncryptionKeys(`${k.toString('hex')}, ${k.toString('base64')}`), [k, k]);
  t.is(parseEncryptionKeys('too-short'), undefined);
  t.throws(() => openSecretBox(loadConfig({ APP_ENCRYPTION_KEY: 'too-short' })), { instanceOf: ConfigError, message: /APP_ENCRYPTION_KEY/ });
});

test('without a key, development generates one into the data folder; production refuses', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'backplane-key-'));
  const box = openSecretBox(loadConfig({ APP_DATA_DIR: dir }));
  t.is(openSecretBox(loadConfig({ APP_DATA_DIR: dir })).open(box.seal('x', 'c'), 'c'), 'x');
  t.is(statSync(join(dir, 'encryption.key')).mode & 0o777, 0o600);
  t.throws(() => openSecretBox(loadConfig({ APP_DATA_DIR: dir, NODE_ENV: 'production', APP_EMBEDDED_DATABASE: '1' })), {
    instanceOf: ConfigError,
    message: /APP_ENCRYPTION_KEY/,
  });
});
