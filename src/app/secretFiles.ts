import { readFileSync } from 'node:fs';

type Env = Record<string, string | undefined>;

/** Variables that hold a secret, so each may also be given as a path in `<NAME>_FILE` (a mounted Secret; ADR 0124). */
export const SECRET_VARIABLES = ['DATABASE_URL', 'DATABASE_LISTEN_URL', 'PGPASSWORD', 'APP_ENCRYPTION_KEY', 'APP_JWT_PRIVATE_KEY', 'APP_OIDC_PROVIDERS'] as const;

/** Reads a secret file; the text is what the file holds less its trailing line breaks (editors and `echo` add one). */
export type SecretFileReader = (path: string) => string;

export const readSecretFile: SecretFileReader = (path) => readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');

/** Why a secret variable could not be read; the message names the variable and never its value. */
export class SecretFileError extends Error {
  override readonly name = 'SecretFileError';
}

/**
 * The environment with each `<NAME>_FILE` read into `<NAME>`. Both set is an error rather than a
 * silent choice: two sources of one secret drift apart, and the wrong one would win unnoticed.
 */
export function withSecretFiles(env: Env, read: SecretFileReader = readSecretFile): Env {
  const resolved: Env = { ...env };
  for (const name of SECRET_VARIABLES) {
    const path = env[`${name}_FILE`]?.trim();
    if (!path) {
      continue;
    }
    if (env[name]) {
      throw new SecretFileError(`${name} and ${name}_FILE are both set: keep one`);
    }
    try {
      resolved[name] = read(path);
    } catch (error) {
      throw new SecretFileError(`${name}_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
  }
  return resolved;
}

/**
 * A connection string with the password of PGPASSWORD (or PGPASSWORD_FILE) when it names none,
 * as libpq does: operator-generated credentials keep the password in a Secret of its own.
 */
export function withPassword(url: string | undefined, password: string | undefined): string | undefined {
  if (!url || !password) {
    return url;
  }
  const parsed = new URL(url);
  if (parsed.password) {
    return url;
  }
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}
