// Runs on a worker thread: opens each sealed token here and sends it to its provider's revocation
// endpoint (RFC 7009), several at a time over keep-alive sockets. Plaintext tokens exist only on
// this thread, only during their request, and never appear in what the task returns.
import { type SecretBox, createSecretBox, parseEncryptionKeys } from '../../../platform/secrets/secretBox.ts';
import { describeProviderFailure } from '../providerFailures.ts';
import { type RevocationClient, RevocationRefused, createRevocationClient } from './rfc7009.ts';

export interface RevocationProvider {
  name: string;
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

async function revokeOne(box: SecretBox, clients: Map<string, RevocationClient>, token: RevokeTokensInput['tokens'][number]): Promise<RevocationResult> {
  const client = clients.get(token.provider);
  if (!client) {
    return { id: token.id, revoked: false, error: 'provider_not_configured' };
  }
  let plaintext: string;
  try {
    plaintext = box.open(token.tokenSealed, `identity:${token.provider}:${token.subject}`);
  } catch {
    return { id: token.id, revoked: false, error: 'token_unreadable' };
  }
  try {
    await client.revoke(plaintext);
    return { id: token.id, revoked: true };
  } catch (error) {
    return { id: token.id, revoked: false, error: error instanceof RevocationRefused ? error.failure : describeProviderFailure(error) };
  }
}

/** The task: every token gets a result, in input order; only a broken input makes it throw. */
export async function revokeTokens(input: RevokeTokensInput): Promise<RevocationResult[]> {
  const keys = parseEncryptionKeys(input.keys);
  if (!keys) {
    throw Object.assign(new Error('the encryption key given to the task does not parse'), { code: 'invalid_task_input' });
  }
  const box = createSecretBox(keys);
  const lanes = Math.max(1, Math.min(input.concurrency, input.tokens.length));
  const clients = new Map(input.providers.map((provider) => [provider.name, createRevocationClient(provider, { timeoutMs: input.timeoutMs, sockets: lanes })]));
  const results: RevocationResult[] = new Array(input.tokens.length);
  let next = 0;
  const lane = async () => {
    while (next < input.tokens.length) {
      const index = next;
      next += 1;
      results[index] = await revokeOne(box, clients, input.tokens[index]!);
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    clients.forEach((client) => client.close());
  }
  return results;
}
