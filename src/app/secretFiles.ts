import { readFileSync, statSync } from 'node:fs';

type Env = Record<string, string | undefined>;

/** Variables that hold a secret, so each may also be given as a path in `<NAME>_FILE` (a mounted Secret; ADR 0124). */
export const SECRET_VARIABLES = [
  'DATABASE_URL',
  'DATABASE_LISTEN_URL',
  'PGPASSWORD',
  'APP_ENCRYPTION_KEY',
  'APP_JWT_PRIVATE_KEY',
  'APP_OIDC_PROVIDERS',
] as const;

/**
 * Reads a secret file; the text is what the file holds less its trailing line breaks (editors and
 * `echo` add one). A file of nothing but blanks reads as '': callers refuse it rather than treat the
 * secret as unset (which, for the encryption key, would quietly make a new one).
 */
export type SecretFileReader = (path: string) => string;

export const readSecretFile: SecretFileReader = (path) => {
  const text = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
  return text.trim() === '' ? '' : text;
};

/** Why a secret variable could not be read; the message names the variable and never its value. */
export class SecretFileError extends Error {
  override readonly name = 'SecretFileError';
}

const UNREADABLE: Record<string, string> = {
  ENOENT: 'it does not exist',
  EACCES: 'this user may not read it',
  EPERM: 'this user may not read it',
  EISDIR: 'it is a folder, not a file',
  ELOOP: 'it is a loop of symbolic links',
  ENOTDIR: 'a part of its path is not a folder',
};

/** The environment with each `<NAME>_FILE` read into `<NAME>`, and a line for each secret file any user may read. */
export interface SecretEnvironment {
  env: Env;
  warnings: string[];
}

/**
 * The environment with each `<NAME>_FILE` read into `<NAME>`. Both set is an error rather than a
 * silent choice: two sources of one secret drift apart, and the wrong one would win unnoticed. A
 * missing, unreadable or empty file is an error too; one readable by every user is a warning.
 */
export function withSecretFiles(env: Env, read: SecretFileReader = readSecretFile): SecretEnvironment {
  const resolved: Env = { ...env };
  const warnings: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const path = env[`${name}_FILE`]?.trim();
    if (!path) {
      continue;
    }
    if (env[name]) {
      throw new SecretFileError(`${name} and ${name}_FILE are both set: keep one`);
    }
    let text: string;
    let mode: number;
    try {
      text = read(path);
      mode = statSync(path).mode;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new SecretFileError(`${name}_FILE: cannot read ${path}: ${(code && UNREADABLE[code]) ?? code ?? 'unreadable'}`);
    }
    if (!text) {
      throw new SecretFileError(`${name}_FILE: ${path} is empty: write the secret into it, or unset ${name}_FILE`);
    }
    // Mounted Secrets are symbolic links (..data/<key>); statSync reads the file they lead to.
    if (mode & 0o004) {
      warnings.push(
        `${name}_FILE: ${path} is readable by every user (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): let only the service's user or group read it (chmod o-r, or a Secret volume's defaultMode 0440 with fsGroup)`,
      );
    }
    resolved[name] = text;
  }
  return { env: resolved, warnings };
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
