import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The cookie that binds a provider flow to the browser that started it. It holds a random secret;
 * the flow row keeps only its SHA-256, so neither the database nor the redirect URL can finish a
 * flow without the browser. `__Host-` (https only) keeps a sibling host from planting its own.
 */
export interface FlowCookie {
  name: string;
  secure: boolean;
}

const SECRET = /^[A-Za-z0-9_-]{43}$/;

export function flowCookie(publicUrl: string): FlowCookie {
  const secure = new URL(publicUrl).protocol === 'https:';
  return { name: secure ? '__Host-backplane_oidc_flow' : 'backplane_oidc_flow', secure };
}

export const newBrowserSecret = (): string => randomBytes(32).toString('base64url');

export const browserHash = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** Constant-time: the flow's stored hash against the hash of the secret the request carries. */
export const sameBrowser = (storedHash: Buffer, secret: string): boolean => {
  const presented = browserHash(secret);
  return storedHash.length === presented.length && timingSafeEqual(storedHash, presented);
};

const attributes = (cookie: FlowCookie) => `Path=/; HttpOnly; SameSite=Lax${cookie.secure ? '; Secure' : ''}`;

export const setFlowCookie = (cookie: FlowCookie, secret: string, maxAgeSeconds: number): string =>
  `${cookie.name}=${secret}; Max-Age=${maxAgeSeconds}; ${attributes(cookie)}`;

export const clearFlowCookie = (cookie: FlowCookie): string => `${cookie.name}=; Max-Age=0; ${attributes(cookie)}`;

/** The secret from a Cookie header (the first cookie of that name), or undefined when absent or malformed. */
export function readFlowCookie(cookie: FlowCookie, header: string): string | undefined {
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === cookie.name) {
      const value = pair.slice(at + 1).trim();
      return SECRET.test(value) ? value : undefined;
    }
  }
  return undefined;
}
