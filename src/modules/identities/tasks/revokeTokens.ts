// Runs on a worker thread: opens each sealed token here and sends it to its provider's revocation
// endpoint (RFC 7009), several at a time. Plaintext tokens exist only on this thread, only during
// their request, and never appear in what the task returns.
import * as oidc from 'openid-client';
import { type SecretBox, createSecretBox, parseEncryptionKeys } from '../../../platform/secrets/secretBox.ts';
import { describeProviderFailure } from '../providerFailures.ts';

export interface RevocationProvider {
  name: string;
  issuer: string;
  revocationEndpoint: string;
  clientId: string;
  clientSecret: string;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  insecureLoopback: boolean;
}

export interface RevokeTokensInput {
  /** The encryption key text (APP_ENCRYPTION_KEY or the development key); opens the tokens on this thread. */
  keys: string;
  providers: RevocationProvider[];
  tokens: Array<{ id: string; provider: string; subject: string; tokenSealed: string }>;
  /** Requests in flight at once. */
  concurrency: number;
  /** Bound on each request. */
  timeoutMs: number;
}

/** One token's outcome; `error` is a short code (`http_503`, `timeout`, …), never provider or token text. */
export interface RevocationResult {
  id: string;
  revoked: boolean;
  error?: string;
}

function configurationFor(provider: RevocationProvider, timeoutMs: number): oidc.Configuration {
  const auth = provider.authMethod === 'client_secret_post' ? oidc.ClientSecretPost(provider.clientSecret) : oidc.ClientSecretBasic(provider.clientSecret);
  const configuration = new oidc.Configuration(
    { issuer: provider.issuer, revocation_endpoint: provider.revocationEndpoint },
    provider.clientId,
    undefined,
    auth,
  );
  if (provider.insecureLoopback) {
    oidc.allowInsecureRequests(configuration);
  }
  configuration.timeout = timeoutMs / 1000;
  return configuration;
}

async function revokeOne(
  box: SecretBox,
  configurations: Map<string, oidc.Configuration>,
  token: RevokeTokensInput['tokens'][number],
): Promise<RevocationResult> {
  const configuration = configurations.get(token.provider);
  if (!configuration) {
    return { id: token.id, revoked: false, error: 'provider_not_configured' };
  }
  let plaintext: string;
  try {
    plaintext = box.open(token.tokenSealed, `identity:${token.provider}:${token.subject}`);
  } catch {
    return { id: token.id, revoked: false, error: 'token_unreadable' };
  }
  try {
    await oidc.tokenRevocation(configuration, plaintext, { token_type_hint: 'refresh_token' });
    return { id: token.id, revoked: true };
  } catch (error) {
    return { id: token.id, revoked: false, error: describeProviderFailure(error) };
  }
}

/** The task: every token gets a result, in input order; only a broken input makes it throw. */
export async function revokeTokens(input: RevokeTokensInput): Promise<RevocationResult[]> {
  const keys = parseEncryptionKeys(input.keys);
  if (!keys) {
    throw Object.assign(new Error('the encryption key given to the task does not parse'), { code: 'invalid_task_input' });
  }
  const box = createSecretBox(keys);
  const configurations = new Map(input.providers.map((provider) => [provider.name, configurationFor(provider, input.timeoutMs)]));
  const results: RevocationResult[] = new Array(input.tokens.length);
  let next = 0;
  const lane = async () => {
    while (next < input.tokens.length) {
      const index = next;
      next += 1;
      results[index] = await revokeOne(box, configurations, input.tokens[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, input.tokens.length)) }, lane));
  return results;
}
