import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { currentDatabaseDeadline } from '../../platform/db/deadline.ts';
import { IdentityError } from './errors.ts';
import type { ProviderSpec } from './providerConfig.ts';

/** Seconds allowed for each HTTP exchange with a provider (discovery, code exchange, userinfo). */
export const PROVIDER_TIMEOUT_SECONDS = 5;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;
/** A readiness check's discovery request is bounded below the readiness bound (2 s), so it reports the provider, not a timeout of its own. */
export const PROVIDER_CHECK_TIMEOUT_MS = 1_500;
/** One discovery request per provider per instance per this period, however often probes ask. */
export const PROVIDER_CHECK_CACHE_MS = 10_000;

/** A readiness check as the health module runs it; `optional` ones are reported, never fail /readyz. */
export interface ProviderReadinessCheck {
  name: string;
  failure: string;
  optional: true;
  /** Resolves with when the provider last answered; the answer is at most one check period old. */
  run(): Promise<Date>;
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

/**
 * A provider call made for a request ends by the request's deadline too, not only by its own 5 s
 * (ADR 0070, amended 2026-11-26): a callback answers within the deadline, whatever the provider does.
 */
export const fetchWithinRequestDeadline: oidc.CustomFetch = (url, options) => {
  const remaining = currentDatabaseDeadline()?.remainingMs();
  if (remaining === undefined) {
    return fetch(url, options);
  }
  const bound = AbortSignal.timeout(Math.max(0, Math.ceil(remaining)));
  return fetch(url, { ...options, signal: options.signal ? AbortSignal.any([options.signal, bound]) : bound });
};

async function discover(spec: ProviderSpec, timeoutSeconds = PROVIDER_TIMEOUT_SECONDS): Promise<oidc.Configuration> {
  const configuration = await oidc.discovery(new URL(spec.issuer), spec.clientId, undefined, clientAuthentication(spec), {
    [oidc.customFetch]: fetchWithinRequestDeadline,
    timeout: timeoutSeconds,
    // Only loopback issuers outside production get here with http (checked in the configuration).
    execute: spec.insecureLoopback ? [oidc.allowInsecureRequests] : [],
  });
  // Discovery's bound becomes the configuration's: the later exchanges get the usual one.
  configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
  return configuration;
}

interface Entry {
  spec: ProviderSpec;
  configuration: oidc.Configuration | undefined;
  attempt: Promise<oidc.Configuration> | undefined;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  /** The live check's last answer: whether the provider answered, and when it last did. */
  checked: { at: number; answered: boolean } | undefined;
  lastAnsweredAt: Date | undefined;
  checking: Promise<boolean> | undefined;
}

/**
 * Discovers every provider in the background, retrying with backoff (1 s doubling to 60 s) until it
 * answers. A provider that cannot be discovered never stops the instance: its routes answer 503 and
 * its readiness check reports it.
 */
export function createProviderDirectory(specs: ProviderSpec[], logger: Logger): ProviderDirectory {
  const entries = new Map<string, Entry>(
    specs.map((spec) => [
      spec.name,
      { spec, configuration: undefined, attempt: undefined, failures: 0, timer: undefined, checked: undefined, lastAnsweredAt: undefined, checking: undefined },
    ]),
  );
  let closed = false;

  const attempt = (entry: Entry): Promise<oidc.Configuration> =>
    (entry.attempt ??= discover(entry.spec)
      .then((configuration) => {
        entry.configuration = configuration;
        entry.lastAnsweredAt = new Date();
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

  /**
   * Asks the provider for its discovery document again, at most once per PROVIDER_CHECK_CACHE_MS,
   * bounded by PROVIDER_CHECK_TIMEOUT_MS; concurrent probes share the request. Once there is an
   * answer, probes get it at once while the next is asked for, so a hanging provider never slows
   * /readyz. A provider still undiscovered takes the answer as its configuration.
   */
  const checkAnswers = (entry: Entry): Promise<boolean> => {
    if (entry.checked && performance.now() - entry.checked.at < PROVIDER_CHECK_CACHE_MS) {
      return Promise.resolve(entry.checked.answered);
    }
    const asking = (entry.checking ??= discover(entry.spec, PROVIDER_CHECK_TIMEOUT_MS / 1_000)
      .then(
        (configuration) => {
          entry.lastAnsweredAt = new Date();
          if (!entry.configuration && !closed) {
            logger.info({ provider: entry.spec.name, failures: entry.failures }, 'identity provider discovered by its readiness check');
            entry.configuration = configuration;
            entry.failures = 0;
            clearTimeout(entry.timer);
          }
          return true;
        },
        () => false,
      )
      .then((answered) => {
        if (entry.checked && entry.checked.answered !== answered) {
          const provider = entry.spec.name;
          if (answered) {
            logger.info({ provider }, 'identity provider answers again');
          } else {
            logger.warn({ provider, last_answered_at: entry.lastAnsweredAt?.toISOString() }, 'identity provider stopped answering');
          }
        }
        entry.checked = { at: performance.now(), answered };
        return answered;
      })
      .finally(() => {
        entry.checking = undefined;
      }));
    return entry.checked ? Promise.resolve(entry.checked.answered) : asking;
  };

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
        failure: `the identity provider ${entry.spec.name} did not answer its discovery request`,
        optional: true as const,
        run: async () => {
          if (!(await checkAnswers(entry)) || !entry.lastAnsweredAt) {
            throw new Error('the provider did not answer');
          }
          return entry.lastAnsweredAt;
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
