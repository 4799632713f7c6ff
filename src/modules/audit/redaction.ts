/** Largest metadata kept, in bytes of JSON; larger metadata is replaced by a marker. */
export const METADATA_MAX_BYTES = 16 * 1024;
export const REDACTED = '[REDACTED]';

// Long names are sensitive wherever they appear in a key (accesstoken, db_password_hint).
const SENSITIVE_WORDS = ['password', 'passwd', 'passphrase', 'passcode', 'secret', 'token', 'credential', 'apikey', 'authorization', 'cookie'];
// Short names only as a whole segment of a key, so `monkey` or `barcode` stay readable.
const SENSITIVE_SEGMENTS = new Set(['pwd', 'key', 'code', 'otp', 'totp', 'pin', 'jwt', 'bearer', 'salt', 'signature', 'cvv']);

/** snake_case segments of a key with a plural `s` dropped: `refreshTokens` → [refresh, token]. */
function segments(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .map((segment) => (segment.length > 3 && segment.endsWith('s') ? segment.slice(0, -1) : segment));
}

export function isSensitiveKey(key: string): boolean {
  const parts = segments(key);
  const joined = parts.join('');
  return parts.some((part) => SENSITIVE_SEGMENTS.has(part)) || SENSITIVE_WORDS.some((word) => joined.includes(word));
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.replace(/\u0000/g, '');
  }
  if (Array.isArray(value)) {
    return value.map(redactValue);
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key.replace(/\u0000/g, '')] = isSensitiveKey(key) ? REDACTED : redactValue(inner);
    }
    return out;
  }
  return value;
}

/**
 * Metadata as stored: JSON only, secret-looking keys redacted at any depth, NULs removed (jsonb
 * refuses them), and a marker instead when it is not JSON or larger than 16 KiB. Never throws:
 * the event is stored whatever its metadata.
 */
export function prepareMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  if (metadata === undefined) {
    return {};
  }
  let plain: unknown;
  try {
    plain = JSON.parse(JSON.stringify(metadata) ?? '{}');
  } catch {
    return { metadata_dropped: 'not_json' };
  }
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) {
    return { metadata_dropped: 'not_json' };
  }
  const redacted = redactValue(plain) as Record<string, unknown>;
  const size = Buffer.byteLength(JSON.stringify(redacted), 'utf8');
  return size > METADATA_MAX_BYTES ? { metadata_dropped: 'too_large', size_bytes: size } : redacted;
}
