import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { IdentityError } from './errors.ts';
import type { ProviderSpec } from './providerConfig.ts';

/** Seconds allowed for each HTTP exchange with a provider (discovery, code exchange, userinfo). */
export const PROVIDER_TIMEOUT_SECONDS = 5;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** A readiness check as the health module runs it; `optional` ones are reported, never fail /readyz. */
export interface ProviderReadinessCheck {
  name: string;
  failure: string;
  optional: true;
  run(): Promise<void>;
}

export interface ProviderDirectory {
  names(): string[];
  spec(name: string): ProviderSpec | undefined;
  /** The discovered configuration, if discovery has succeeded. */
  current(name: string): oidc.Configuration | undefined;
  /** The configuration, trying discovery once more now when it is missing (503 provider_unavailable). */
  configuration(name: string): Promise<oidc.Configuration>;
  readinessChecks(): ProviderReadinessCheck[];
  close(): void;
}

export function clientAuthentication(spec: Pick<ProviderSpec, 'authMethod' | 'clientSecret'>): oidc.ClientAuth {
  return spec.authMethod === 'client_secret_post' ? oidc.ClientSecretPost(spec.clientSecret) : oidc.ClientSecretBasic(spec.clientSecret);
}

async function discover(spec: ProviderSpec): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(spec.issuer), spec.clientId, undefined, clientAuthentication(spec), {
    timeout: PROVIDER_TIMEOUT_SECONDS,
    // Only loopback issuers outside production get here with http (checked in the configuration).
    execute: spec.insecureLoopback ? [oidc.allowInsecureRequests] : [],
  });
}

interface Entry {
  spec: ProviderSpec;
  configuration: oidc.Configuration | undefined;
  attempt: Promise<oidc.Configuration> | undefined;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Discovers every provider in the background, retrying with backoff (1 s doubling to 60 s) until it
 * answers. A provider that cannot be discovered never stops the instance: its routes answer 503 and
 * its readiness check reports it.
 */
export function createProviderDirectory(specs: ProviderSpec[], logger: Logger): ProviderDirectory {
  const entries = new Map<string, Entry>(specs.map((spec) => [spec.name, { spec, configuration: undefined, attempt: undefined, failures: 0, timer: undefined }]));
  let closed = false;

  const attempt = (entry: Entry): Promise<oidc.Configuration> =>
    (entry.attempt ??= discover(entry.spec)
      .then((configuration) => {
        entry.configuration = configuration;
        if (entry.failures > 0) {
          logger.info({ provider: entry.spec.name, failures: entry.failures }, 'identity provider discovered after failing');
        }
        entry.failures = 0;
        return configuration;
      })
      .catch((error: unknown) => {
        entry.failures += 1;
        logger.warn({ provider: entry.spec.name, failures: entry.failures, err: error }, 'identity provider discovery failed; retrying');
        throw new IdentityError('provider_unavailable', `The provider ${entry.spec.name} cannot be reached; try again later.`, { cause: error });
      })
      .finally(() => {
        entry.attempt = undefined;
      }));

  const keepTrying = (entry: Entry) => {
    if (closed || entry.configuration) {
      return;
    }
    attempt(entry).catch(() => {
      if (closed || entry.configuration) {
        return;
      }
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(entry.failures - 1, 16));
      entry.timer = setTimeout(() => keepTrying(entry), delay);
      entry.timer.unref();
    });
  };
  for (const entry of entries.values()) {
    keepTrying(entry);
  }

  const entryOf = (name: string): Entry => {
    const entry = entries.get(name);
    if (!entry) {
      throw new IdentityError('provider_not_found', `There is no identity provider ${name}.`);
    }
    return entry;
  };

  return {
    names: () => [...entries.keys()],
    spec: (name) => entries.get(name)?.spec,
    current: (name) => entries.get(name)?.configuration,
    async configuration(name) {
      const entry = entryOf(name);
      return entry.configuration ?? attempt(entry);
    },
    readinessChecks: () =>
      [...entries.values()].map((entry) => ({
        name: `oidc:${entry.spec.name}`,
        failure: `the identity provider ${entry.spec.name} has not been discovered yet`,
        optional: true as const,
        run: async () => {
          if (!entry.configuration) {
            throw new Error('not discovered');
          }
        },
      })),
    close() {
      closed = true;
      for (const entry of entries.values()) {
        clearTimeout(entry.timer);
      }
    },
  };
}
