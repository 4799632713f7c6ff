import { loadConfig } from '../../src/app/config.ts';
import { type RunningInstance, startInstance } from '../../src/app/instance.ts';
import type { RateLimitSettings } from '../../src/modules/ratelimit/index.ts';

/** One real instance in this process on a free port, against the given database. */
export async function startTestInstance(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { rateLimits?: RateLimitSettings; rateLimitTimeoutMs?: number } = {},
): Promise<RunningInstance> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    APP_METRICS_PORT: '0',
    // A fixed key, so test instances never generate one into the checkout's data folder.
    APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...env,
  });
  return startInstance(config, options);
}
