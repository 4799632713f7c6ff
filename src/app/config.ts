import { createPrivateKey } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { type ProxyRange, parseTrustedProxies } from '../platform/http/clientAddress.ts';
import { type ProviderSpec, parseProviderList } from '../modules/identities/index.ts';
import { SecretFileError, readSecretFile, withPassword, withSecretFiles } from './secretFiles.ts';

/** Everything the service reads from the environment; the only reader of process.env. */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string | undefined;
  /** DATABASE_LISTEN_URL: a direct connection (no transaction pooler) for LISTEN, migrations' lock and retention purges. */
  databaseListenUrl: string | undefined;
  /** DATABASE_POOLING: `transaction` when DATABASE_URL goes through a transaction pooler (PgBouncer), `session` otherwise. */
  databasePooling: DatabasePooling;
  /** Connections each instance may open (ADR 0092). */
  pools: PoolSizes;
  /**
   * APP_RATELIMIT_BATCHING: `pod` (the primary decides for every instance it forked, in shared
   * statements and on one decision pool) or `instance` (each instance on its own pool); ADR 0020.
   */
  rateLimitBatching: RateLimitBatching;
  /**
   * APP_RATELIMIT_SPACING_MS: least time between the starts of the pod's decision statements of one
   * limiter while keys keep coming; what a decision may wait under load for fewer statements.
   */
  rateLimitSpacingMs: number;
  /** APP_MIGRATIONS: `apply` (serve migrates at start-up) or `wait` (a migrate Job does; serve waits for the schema; ADR 0125). */
  migrations: 'apply' | 'wait';
  dataDir: string;
  instances: number;
  jobWorkers: number;
  /** Queues this instance's job workers consume. */
  jobQueues: string[];
  /** How long a claimed job run stays this instance's without a renewal; another instance takes it over after. */
  jobLeaseSeconds: number;
  /** Adds the test job definitions (never in production). */
  testJobs: boolean;
  taskThreads: number;
  metricsPort: number;
  drainTimeoutMs: number;
  heartbeatSeconds: number;
  bodyLimitBytes: number;
  /** The one deadline of a request from its arrival (APP_REQUEST_DEADLINE_SECONDS): limiter, connection, statements; past it, 503 database_unavailable. */
  requestDeadlineMs: number;
  /** Proxies whose X-Forwarded-For is believed (APP_TRUSTED_PROXIES). */
  trustedProxies: ProxyRange[];
  encryptionKey: string | undefined;
  jwtPrivateKey: string | undefined;
  publicUrl: string;
  /** APP_OIDC_PROVIDERS, checked: a bad entry stops start-up. */
  oidcProviders: ProviderSpec[];
  logLevel: string;
  production: boolean;
  /** APP_EMBEDDED_DATABASE=1: production may run the embedded database (one pod, one database). */
  embeddedDatabase: boolean;
  /** An instance silent to the primary's liveness ping this long is killed and replaced. */
  instanceLivenessMs: number;
  /** Idle keep-alive time of API connections: above load balancers' idle timeouts, so they close first. */
  keepAliveTimeoutMs: number;
  /** APP_READINESS_REQUIRES_DATABASE=1: /readyz is 503 while the database fails (ADR 0123); off, it is only listed. */
  readinessRequiresDatabase: boolean;
  /** NODE_OPTIONS as given: a --max-old-space-size there is the operator's heap limit, kept (src/app/heapSize.ts). */
  nodeOptions: string | undefined;
  /**
   * Which variables gave databaseUrl and databaseListenUrl, for messages that must never print the
   * URLs: `DATABASE_URL`, `DATABASE_URL_FILE`, `DATABASE_URL_FILE (password from PGPASSWORD_FILE)`.
   */
  databaseSources: { url: string; listenUrl: string };
  /** What start-up should say but not refuse, one line each (a secret file any user may read); commands print them. */
  warnings: string[];
}

export type DatabasePooling = 'session' | 'transaction';

export type RateLimitBatching = 'pod' | 'instance';

export interface PoolSizes {
  /** DATABASE_POOL_SIZE: the instance's pool for requests, jobs and heartbeats. */
  main: number;
  /** DATABASE_RATELIMIT_POOL_SIZE: the pool reserved for rate-limit decisions, also their statements in flight. */
  rateLimit: number;
  /** DATABASE_TASK_POOL_SIZE: connections each task thread opens for a retention purge. */
  taskThread: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

const QUEUE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

function queueList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) {
    return ['default'];
  }
  const queues = raw.split(',').map((queue) => queue.trim());
  if (queues.some((queue) => !QUEUE_NAME.test(queue))) {
    throw new ConfigError(`${name} must be a comma-separated list of queue names (lowercase letters, digits, _)`);
  }
  return [...new Set(queues)];
}

function flag(env: Env, name: string): boolean {
  const raw = env[name]?.trim() ?? '';
  if (!['', '0', '1'].includes(raw)) {
    throw new ConfigError(`${name} must be 1 or 0`);
  }
  return raw === '1';
}

function trustedProxies(env: Env): ProxyRange[] {
  try {
    return parseTrustedProxies(env.APP_TRUSTED_PROXIES ?? '');
  } catch (error) {
    throw new ConfigError(`APP_TRUSTED_PROXIES: ${(error as Error).message}; expected comma-separated <network>/<prefix> ranges`);
  }
}

/** The auth module imports the key as PKCS#8 Ed25519 (jose importPKCS8): refuse anything else here, once. */
function jwtPrivateKey(env: Env): string | undefined {
  const raw = env.APP_JWT_PRIVATE_KEY;
  if (!raw?.trim()) {
    return undefined;
  }
  const pem = raw.replace(/\\n/g, '\n');
  let type: string | undefined;
  try {
    type = createPrivateKey({ key: pem, format: 'pem' }).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== 'ed25519' || !pem.startsWith('-----BEGIN PRIVATE KEY-----')) {
    throw new ConfigError('APP_JWT_PRIVATE_KEY must be an Ed25519 private key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)');
  }
  return raw;
}

function postgresUrl(env: Env, name: string): string | undefined {
  const url = env[name] || undefined;
  if (url && !/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError(`${name} must be a postgres:// connection string`);
  }
  try {
    return withPassword(url, env.PGPASSWORD || undefined);
  } catch {
    throw new ConfigError(`${name} must be a postgres:// connection string`);
  }
}

/** Where a connection string came from (see Config.databaseSources); `environment` is as given, `env` with the files read. */
function databaseSource(environment: Env, env: Env, name: string): string {
  const variable = environment[`${name}_FILE`]?.trim() ? `${name}_FILE` : name;
  const password = environment.PGPASSWORD_FILE?.trim() ? 'PGPASSWORD_FILE' : 'PGPASSWORD';
  let ownPassword = true;
  try {
    ownPassword = env[name] ? new URL(env[name]).password !== '' : true;
  } catch {
    // postgresUrl refuses it.
  }
  return !ownPassword && env.PGPASSWORD ? `${variable} (password from ${password})` : variable;
}

function databasePooling(env: Env): DatabasePooling {
  const raw = env.DATABASE_POOLING?.trim() || 'session';
  if (raw !== 'session' && raw !== 'transaction') {
    throw new ConfigError('DATABASE_POOLING must be session or transaction');
  }
  return raw;
}

function rateLimitBatching(env: Env): RateLimitBatching {
  const raw = env.APP_RATELIMIT_BATCHING?.trim() || 'pod';
  if (raw !== 'pod' && raw !== 'instance') {
    throw new ConfigError('APP_RATELIMIT_BATCHING must be pod or instance');
  }
  return raw;
}

function migrationsMode(env: Env): 'apply' | 'wait' {
  const raw = env.APP_MIGRATIONS?.trim() || 'apply';
  if (raw !== 'apply' && raw !== 'wait') {
    throw new ConfigError('APP_MIGRATIONS must be apply or wait');
  }
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(environment: Env = process.env): Config {
  let env: Env;
  let warnings: string[];
  try {
    ({ env, warnings } = withSecretFiles(environment));
  } catch (error) {
    if (error instanceof SecretFileError) {
      throw new ConfigError(error.message);
    }
    throw error;
  }
  const port = integer(env, 'PORT', 8080, 0, 65_535);
  const metricsPort = integer(env, 'APP_METRICS_PORT', 9464, 0, 65_535);
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('APP_METRICS_PORT must differ from PORT: metrics are never served on the API port');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  const databaseListenUrl = postgresUrl(env, 'DATABASE_LISTEN_URL');
  const pooling = databasePooling(env);
  // LISTEN, a session advisory lock and session options need a server connection of their own.
  if (pooling === 'transaction' && !databaseListenUrl) {
    throw new ConfigError(
      'DATABASE_LISTEN_URL is required when DATABASE_POOLING=transaction: a direct connection to PostgreSQL for LISTEN, migrations and retention purges',
    );
  }
  if ((pooling === 'transaction' || databaseListenUrl) && !databaseUrl) {
    throw new ConfigError('DATABASE_LISTEN_URL and DATABASE_POOLING=transaction need DATABASE_URL: they describe how an external database is reached');
  }
  const publicUrl = env.APP_PUBLIC_URL || `http://localhost:${port}`;
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError('APP_PUBLIC_URL must be an absolute URL');
  }
  const drainSeconds = integer(env, 'APP_DRAIN_TIMEOUT_SECONDS', 10, 1, 600);
  const production = env.NODE_ENV === 'production';
  const testJobs = flag(env, 'APP_TEST_JOBS');
  if (testJobs && production) {
    throw new ConfigError('APP_TEST_JOBS must not be set in production: it adds jobs that exist only for tests');
  }
  const oidcProviders = parseProviderList(env.APP_OIDC_PROVIDERS, production, readSecretFile);
  if (!Array.isArray(oidcProviders)) {
    throw new ConfigError(`APP_OIDC_PROVIDERS ${oidcProviders.problem}`);
  }
  const embeddedDatabase = flag(env, 'APP_EMBEDDED_DATABASE');
  // Each pod of a Deployment would get a database of its own, sharing no limit, job slot or setting.
  if (production && !databaseUrl && !embeddedDatabase) {
    throw new ConfigError('DATABASE_URL is required when NODE_ENV=production (set APP_EMBEDDED_DATABASE=1 to run the embedded database anyway)');
  }
  return {
    host: env.HOST || '0.0.0.0',
    port,
    databaseUrl,
    databaseListenUrl,
    databasePooling: pooling,
    pools: {
      main: integer(env, 'DATABASE_POOL_SIZE', 10, 2, 500),
      rateLimit: integer(env, 'DATABASE_RATELIMIT_POOL_SIZE', 4, 1, 64),
      taskThread: integer(env, 'DATABASE_TASK_POOL_SIZE', 3, 2, 16),
    },
    rateLimitBatching: rateLimitBatching(env),
    rateLimitSpacingMs: integer(env, 'APP_RATELIMIT_SPACING_MS', 20, 0, 1000),
    migrations: migrationsMode(env),
    dataDir: resolve(env.APP_DATA_DIR || '.data'),
    instances: integer(env, 'APP_INSTANCES', availableParallelism(), 1, 64),
    jobWorkers: integer(env, 'APP_JOB_WORKERS', 1, 0, 64),
    jobQueues: queueList(env, 'APP_JOB_QUEUES'),
    jobLeaseSeconds: integer(env, 'APP_JOB_LEASE_SECONDS', 30, 2, 3600),
    testJobs,
    taskThreads: integer(env, 'APP_TASK_THREADS', 2, 1, 64),
    metricsPort,
    drainTimeoutMs: drainSeconds * 1000,
    heartbeatSeconds: integer(env, 'APP_HEARTBEAT_SECONDS', 15, 1, 300),
    bodyLimitBytes: integer(env, 'APP_BODY_LIMIT_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    requestDeadlineMs: integer(env, 'APP_REQUEST_DEADLINE_SECONDS', 5, 1, 300) * 1000,
    trustedProxies: trustedProxies(env),
    encryptionKey: env.APP_ENCRYPTION_KEY || undefined,
    jwtPrivateKey: jwtPrivateKey(env),
    publicUrl: publicUrl.replace(/\/$/, ''),
    oidcProviders,
    logLevel,
    production,
    embeddedDatabase,
    instanceLivenessMs: integer(env, 'APP_INSTANCE_LIVENESS_SECONDS', 30, 2, 600) * 1000,
    keepAliveTimeoutMs: integer(env, 'APP_KEEP_ALIVE_TIMEOUT_SECONDS', 65, 1, 3600) * 1000,
    readinessRequiresDatabase: flag(env, 'APP_READINESS_REQUIRES_DATABASE'),
    nodeOptions: env.NODE_OPTIONS || undefined,
    databaseSources: { url: databaseSource(environment, env, 'DATABASE_URL'), listenUrl: databaseSource(environment, env, 'DATABASE_LISTEN_URL') },
    warnings,
  };
}
