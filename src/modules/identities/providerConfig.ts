import { z } from 'zod';

/** One OpenID Connect provider as APP_OIDC_PROVIDERS declares it. */
export interface ProviderSpec {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** How the client authenticates at the token and revocation endpoints. */
  authMethod: 'client_secret_basic' | 'client_secret_post';
  /** Extra authorization request parameters some providers need (Google: access_type=offline). */
  authorizationParams: Record<string, string>;
  /** http:// on a loopback address (tests, local development); never in production. */
  insecureLoopback: boolean;
}

export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
// Set by the flow itself: state, nonce and PKCE would be weakened by a fixed value.
const RESERVED_PARAMS = new Set(['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const Entry = z.strictObject({
  name: z.string().regex(PROVIDER_NAME, 'must be 1–32 lowercase letters, digits, - or _, starting with a letter'),
  issuer: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  client_id: z.string().min(1).max(255),
  client_secret: z.string().min(1).max(1024).optional(),
  /** A file holding the secret (a mounted Secret), instead of client_secret; ADR 0124. */
  client_secret_file: z.string().min(1).max(1024).optional(),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token'))
    .min(1)
    .max(20)
    .refine((scopes) => scopes.includes('openid'), 'must include openid')
    .default(['openid', 'email']),
  token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  authorization_params: z
    .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a parameter name'), z.string().max(200))
    .refine((params) => !Object.keys(params).some((name) => RESERVED_PARAMS.has(name)), 'must not set a parameter of the flow itself')
    .default({}),
});

const Entries = z
  .array(
    Entry.refine((entry) => (entry.client_secret === undefined) !== (entry.client_secret_file === undefined), {
      message: 'must set exactly one of client_secret and client_secret_file',
      path: ['client_secret'],
    }),
  )
  .max(20);

/**
 * Reads APP_OIDC_PROVIDERS. Returns the providers, or a sentence saying what is wrong; the
 * sentence never quotes a value (a client secret could be one).
 */
export function parseProviderList(
  text: string | undefined,
  production: boolean,
  readSecretFile?: (path: string) => string,
): ProviderSpec[] | { problem: string } {
  if (text === undefined || text.trim() === '') {
    return [];
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: 'is not valid JSON' };
  }
  const parsed = Entries.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [index, ...field] = issue.path.map(String);
    const where = index === undefined ? '' : `entry [${index}]${field.length > 0 ? `.${field.join('.')}` : ''}: `;
    return { problem: `${where}${issue.message}` };
  }
  const names = new Set<string>();
  const providers: ProviderSpec[] = [];
  for (const [index, entry] of parsed.data.entries()) {
    if (names.has(entry.name)) {
      return { problem: `entry [${index}] repeats the provider name ${entry.name}` };
    }
    names.add(entry.name);
    const issuer = new URL(entry.issuer);
    const insecureLoopback = issuer.protocol === 'http:';
    if (insecureLoopback && (production || !LOOPBACK_HOSTS.has(issuer.hostname))) {
      return { problem: `entry [${index}] issuer must be https (http only for a loopback issuer outside production)` };
    }
    let clientSecret = entry.client_secret;
    if (entry.client_secret_file !== undefined) {
      try {
        clientSecret = readSecretFile?.(entry.client_secret_file);
      } catch {
        clientSecret = undefined;
      }
      if (!clientSecret) {
        return { problem: `entry [${index}].client_secret_file: cannot read ${entry.client_secret_file}, or it is empty` };
      }
    }
    providers.push({
      name: entry.name,
      issuer: entry.issuer,
      clientId: entry.client_id,
      clientSecret: clientSecret!,
      scopes: [...new Set(entry.scopes)],
      authMethod: entry.token_endpoint_auth_method,
      authorizationParams: entry.authorization_params,
      insecureLoopback,
    });
  }
  return providers;
}
