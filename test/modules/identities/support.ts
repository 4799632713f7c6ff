// Shared steps of the identity tests: the browser's round trip through the service and the provider.
import client from 'prom-client';
import { bearerIdentifier as identifyCaller } from '../../../src/modules/auth/index.ts';
import { recordAuditEvent } from '../../../src/modules/audit/index.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { type RevocationPolicy, canStillSignIn, createIdentities, identityAccounts, providerSignIn } from '../../../src/modules/identities/index.ts';
import { parseProviderList } from '../../../src/modules/identities/providerConfig.ts';
import type { InstrumentedPool } from '../../../src/platform/db/pool.ts';
import { createLogger } from '../../../src/platform/logging/logger.ts';
import { createSecretBox, parseEncryptionKeys } from '../../../src/platform/secrets/secretBox.ts';
import { createTaskPool } from '../../../src/platform/tasks/pool.ts';
import { TEST_ENCRYPTION_KEY } from '../../support/instance.ts';
import { type TestProvider, authorizeAtProvider, onInstance } from '../../support/oidcProvider.ts';

export const box = createSecretBox(parseEncryptionKeys(TEST_ENCRYPTION_KEY)!);

export interface ProviderRoundTrip {
  start: Response;
  callback: Response;
  body: any;
}

/** The `name=value` of the flow cookie a start set, as the browser sends it back. */
export function flowCookieOf(start: Response): string {
  const line = start.headers.getSetCookie().find((candidate) => candidate.includes('oidc_flow='));
  if (!line) {
    throw new Error('the start set no flow cookie');
  }
  return line.split(';')[0]!;
}

/** start → the provider's login and consent as `subject` → callback with the start's cookie, as a browser would. */
export async function signInThroughProvider(
  instanceUrl: string,
  provider: string,
  subject: string,
  headers: Record<string, string> = {},
): Promise<ProviderRoundTrip> {
  const start = await fetch(`${instanceUrl}/auth/providers/${provider}/start`, { redirect: 'manual', headers });
  if (start.status !== 302) {
    return { start, callback: start, body: await start.clone().json() };
  }
  const returned = await authorizeAtProvider(start.headers.get('Location')!, subject);
  const callback = await fetch(onInstance(returned, instanceUrl), { headers: { Cookie: flowCookieOf(start) } });
  return { start, callback, body: await callback.clone().json() };
}

/** The refresh token the service keeps for an identity, opened with the test key. */
export async function storedRefreshToken(pool: InstrumentedPool, provider: string, subject: string): Promise<string> {
  const { rows } = await pool.query<{ refresh_token_sealed: string }>('select refresh_token_sealed from identities where provider = $1 and subject = $2', [
    provider,
    subject,
  ]);
  return box.open(rows[0]!.refresh_token_sealed, `identity:${provider}:${subject}`);
}

/**
 * The identities module as an instance builds it, on the test's database: its
 * revokeQueuedTokens() is what the job auth_revoke_tokens runs each minute.
 */
export async function identitiesOn(pool: InstrumentedPool, providers: TestProvider[], names: string[], policy: Partial<RevocationPolicy> = {}) {
  const specs = parseProviderList(JSON.stringify(providers.map((provider, index) => provider.entry(names[index]!))), false);
  if (!Array.isArray(specs)) {
    throw new Error(specs.problem);
  }
  const logger = createLogger('silent');
  const registry = new client.Registry();
  const tasks = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry, logger });
  const signingKey = await loadSigningKey(pool, undefined, box);
  const recordAudit = async (tx: Parameters<typeof recordAuditEvent>[0], event: Parameters<typeof recordAuditEvent>[1]) =>
    void (await recordAuditEvent(tx, event));
  const started = await createIdentities({
    pool,
    logger,
    registry,
    runTask: tasks.runTask,
    providers: specs,
    box,
    encryptionKeys: TEST_ENCRYPTION_KEY,
    publicUrl: 'http://app.test',
    accounts: identityAccounts,
    completeSignIn: providerSignIn(signingKey, recordAudit),
    canStillSignIn,
    identifyCaller: identifyCaller(pool, signingKey),
    recordAudit,
    revocationPolicy: policy,
  });
  const module = { ...started.api, close: () => started.close?.() };
  for (const name of names) {
    await module.providers.configuration(name).catch(() => undefined);
  }
  return {
    module,
    registry,
    async close() {
      module.close();
      await tasks.close();
    },
  };
}
