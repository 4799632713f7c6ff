import { type Application, currentApplication } from '../app/application.ts';
import { loadConfig } from '../app/config.ts';
import { type RunningInstance, startInstance } from '../app/instance.ts';
import type { RateLimitSettings } from '../modules/ratelimit/index.ts';

/** The key test instances seal secrets with (never the development key file in the working tree). */
export const TEST_ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** How startTestInstance runs the instance beyond its environment. */
export interface TestInstanceOptions {
  /** The application to run; Backplane's modules alone (or the one runCli set) unless given. */
  application?: Application;
  /** Limits the instance reads instead of the runtime settings (a test of a limit sets its own). */
  rateLimits?: RateLimitSettings;
  /** How long a rate-limit decision may wait for the database before the instance decides alone (2 s unless given). */
  rateLimitTimeoutMs?: number;
}

/** One real instance in this process on a free port, against the given database. */
export async function startTestInstance(databaseUrl: string, env: Record<string, string> = {}, options: TestInstanceOptions = {}): Promise<RunningInstance> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    APP_METRICS_PORT: '0',
    APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    // The request deadline covers the limiter's wait: a bound raised for loaded machines needs a deadline above it.
    ...(options.rateLimitTimeoutMs ? { APP_REQUEST_DEADLINE_SECONDS: String(Math.ceil(options.rateLimitTimeoutMs / 1_000) + 5) } : {}),
    ...env,
  });
  return startInstance(options.application ?? (await currentApplication()), config, options);
}
