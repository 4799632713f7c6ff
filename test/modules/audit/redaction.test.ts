import test from 'ava';
import { METADATA_MAX_BYTES, REDACTED, isSensitiveKey, prepareMetadata } from '../../../src/modules/audit/redaction.ts';

test('secret-looking keys are recognised by their words, whatever the casing', (t) => {
  for (const key of [
    'password',
    'Password',
    'new_password',
    'passwords',
    'passwd',
    'passphrase',
    'secret',
    'client_secret',
    'clientSecret',
    'token',
    'refreshToken',
    'access_token',
    'accesstoken',
    'tokens',
    'api_key',
    'apiKey',
    'API-Key',
    'apikey',
    'key',
    'private_key',
    'code',
    'recovery_codes',
    'totpCode',
    'otp',
    'pin',
    'jwt',
    'authorization',
    'Cookie',
    'set-cookie',
    'credentials',
    'passcode',
    'signature',
  ]) {
    t.true(isSensitiveKey(key), key);
  }
  for (const key of [
    'name',
    'email',
    'role',
    'reason',
    'old_value',
    'new_value',
    'version',
    'monkey',
    'barcode',
    'keyboard',
    'permissions',
    'status',
    'ttl_seconds',
  ]) {
    t.false(isSensitiveKey(key), key);
  }
});

test('redaction reaches every depth, arrays included, and keeps the rest', (t) => {
  const metadata = prepareMetadata({
    reason: 'rotate',
    password: 'hunter2',
    nested: { deeper: { client_secret: { anything: 'x' }, ok: 1 }, list: [{ token: 't1' }, { name: 'n', apiKey: 42 }] },
    recovery_codes: ['a', 'b'],
  });
  t.deepEqual(metadata, {
    reason: 'rotate',
    password: REDACTED,
    nested: { deeper: { client_secret: REDACTED, ok: 1 }, list: [{ token: REDACTED }, { name: 'n', apiKey: REDACTED }] },
    recovery_codes: REDACTED,
  });
  t.false(JSON.stringify(metadata).includes('hunter2'));
});

test('metadata over 16 KiB after redaction is replaced by a marker', (t) => {
  t.deepEqual(prepareMetadata({ note: 'x'.repeat(METADATA_MAX_BYTES - 20) }), { note: 'x'.repeat(METADATA_MAX_BYTES - 20) });
  const large = prepareMetadata({ note: 'x'.repeat(METADATA_MAX_BYTES) });
  t.is(large.metadata_dropped, 'too_large');
  // A large secret is redacted first, so it does not count.
  t.deepEqual(prepareMetadata({ token: 'x'.repeat(100_000) }), { token: REDACTED });
  // Multi-byte text is measured in bytes.
  t.is(prepareMetadata({ note: 'é'.repeat(9_000) }).metadata_dropped, 'too_large');
});

test('metadata that is not JSON becomes a marker; NULs are removed', (t) => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  t.deepEqual(prepareMetadata(cycle), { metadata_dropped: 'not_json' });
  t.deepEqual(prepareMetadata({ big: 10n }), { metadata_dropped: 'not_json' });
  t.deepEqual(prepareMetadata({ 'a\u0000b': 'c\u0000d', when: new Date('2026-01-01T00:00:00Z'), skip: undefined }), {
    ab: 'cd',
    when: '2026-01-01T00:00:00.000Z',
  });
  t.deepEqual(prepareMetadata(undefined), {});
});
