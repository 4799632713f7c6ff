import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { renderApiFiles } from '../app/apiFiles.ts';
import { type Config, ConfigError, loadConfig } from '../app/config.ts';
import { connectionBudget } from '../app/connectionBudget.ts';
import { MIN_SERVER_VERSION_NUM } from '../app/database.ts';
import { type JobsServiceDeps, describeJobs } from '../modules/jobs/index.ts';
import { selectInstances } from '../modules/releases/index.ts';
import { migrationStatus } from '../platform/db/migrations.ts';

/** `skip`: the check did not run (nothing to check, or what it needs did not answer), so it vouches for nothing. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  check: string;
  status: CheckStatus;
  /** What was found, with numbers; for warn and fail, what to do. */
  message: string;
}

/** What the checks look at; each check reads only what it needs, so tests build only that. */
export interface DoctorContext {
  env: Record<string, string | undefined>;
  config: Config;
  pool: pg.Pool;
  jobs: JobsServiceDeps;
  /** The generated API files to compare with the routes, or why none are (an application without api/). */
  apiFiles: { dir: string } | { skipped: string };
  /** The host's clock; a test shifts it to show skew. */
  hostNow: () => number;
  /** Loopback fetch with a bound, for the metrics port and providers. */
  fetchText: (url: string) => Promise<{ status: number; text: string }>;
}

export interface Check {
  name: string;
  run(context: DoctorContext): Promise<Omit<CheckResult, 'check'>>;
}

const ok = (message: string) => ({ status: 'ok' as const, message });
const warn = (message: string) => ({ status: 'warn' as const, message });
const fail = (message: string) => ({ status: 'fail' as const, message });
const skip = (message: string) => ({ status: 'skip' as const, message });

const SKEW_WARN_MS = 1_000;
const SKEW_FAIL_MS = 5_000;
const ALONE_FAIL_SECONDS = 300;

export const configurationCheck: Check = {
  name: 'configuration',
  async run({ env }) {
    let config: Config;
    try {
      config = loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) {
        return fail(`${error.message}; fix the variable and run doctor again`);
      }
      throw error;
    }
    // Signing keys live sealed in the database (ADR 0068): only the key that seals them must come from outside.
    if (config.production && !config.encryptionKey) {
      return fail(
        'NODE_ENV=production without APP_ENCRYPTION_KEY (or APP_ENCRYPTION_KEY_FILE): a key generated at start differs per pod and is lost on restart; set it from a secret',
      );
    }
    if (config.warnings.length > 0) {
      return warn(config.warnings.join('; '));
    }
    return ok(`every variable parsed${config.production ? ' (production, keys set)' : ''}`);
  },
};

export const databaseCheck: Check = {
  name: 'database',
  async run({ pool }) {
    const { rows } = await pool.query<{ num: string; version: string }>(
      `select current_setting('server_version_num') as num, current_setting('server_version') as version`,
    );
    const { num, version } = rows[0]!;
    if (Number(num) < MIN_SERVER_VERSION_NUM) {
      return fail(`PostgreSQL ${version} is older than 14; upgrade the database server`);
    }
    return ok(`reachable, PostgreSQL ${version}`);
  },
};

export const migrationsCheck: Check = {
  name: 'migrations',
  async run({ pool }) {
    const status = await migrationStatus(pool);
    if (status.unknown.length > 0) {
      return fail(
        `the database holds ${status.unknown.length} migration(s) this code does not know (${status.unknown.join(', ')}): run the release that applied them, or newer`,
      );
    }
    if (status.pending > 0) {
      return warn(`${status.pending} migration(s) pending (${status.pendingNames.join(', ')}): run backplane migrate up`);
    }
    return ok(`current at ${status.current}`);
  },
};

export const apiFilesCheck: Check = {
  name: 'api_files',
  async run({ apiFiles }) {
    if (!('dir' in apiFiles)) {
      return skip(apiFiles.skipped);
    }
    const apiDir = apiFiles.dir;
    const stale: string[] = [];
    for (const [name, content] of Object.entries(await renderApiFiles())) {
      let onDisk: string | undefined;
      try {
        onDisk = readFileSync(join(apiDir, name), 'utf8');
      } catch {
        onDisk = undefined;
      }
      if (onDisk !== content) {
        stale.push(name);
      }
    }
    if (stale.length) {
      return fail(`${stale.join(', ')} in ${apiDir} differ from the routes: run backplane openapi --dir ${apiDir}`);
    }
    return ok(`${apiDir} matches the routes`);
  },
};

export const clockCheck: Check = {
  name: 'clock',
  async run({ pool, hostNow }) {
    const before = hostNow();
    const { rows } = await pool.query<{ now_ms: string }>(`select (extract(epoch from clock_timestamp()) * 1000)::bigint::text as now_ms`);
    const after = hostNow();
    // Compared with the middle of the round trip; the round trip bounds the error.
    const skew = Number(rows[0]!.now_ms) - (before + after) / 2;
    const text = `this host's clock is ${Math.abs(Math.round(skew))} ms ${skew > 0 ? 'behind' : 'ahead of'} the database's (round trip ${after - before} ms)`;
    if (Math.abs(skew) > SKEW_FAIL_MS + (after - before)) {
      return fail(`${text}: token lifetimes and heartbeats go wrong; fix time sync (NTP) on this host or the database`);
    }
    if (Math.abs(skew) > SKEW_WARN_MS + (after - before)) {
      return warn(`${text}: check time sync (NTP)`);
    }
    return ok(text);
  },
};

export const poolSizeCheck: Check = {
  name: 'pool_size',
  async run({ pool, config }) {
    const { rows } = await pool.query<{ max: number; reserved: number }>(
      `select current_setting('max_connections')::int as max,
              current_setting('superuser_reserved_connections')::int
                + coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int as reserved`,
    );
    const running = (await selectInstances(pool, { staleAfterSeconds: 3 * config.heartbeatSeconds, afterId: undefined, running: true, limit: 200 })).length;
    const instances = Math.max(config.instances, running);
    // Pods of APP_INSTANCES instances each, every pod's primary with its decision pool when it decides for them.
    const budget = connectionBudget(config);
    const needed = instances * budget.perInstance + Math.ceil(instances / config.instances) * budget.perPod;
    const available = rows[0]!.max - rows[0]!.reserved;
    const text = `${instances} instance(s) may hold ${needed} connections; the database allows ${available} (max_connections ${rows[0]!.max})`;
    if (needed > available) {
      return fail(`${text}: lower APP_INSTANCES, put PgBouncer in front, or raise max_connections`);
    }
    if (needed > available * 0.8) {
      return warn(`${text}: little room left for migrations, commands and other clients`);
    }
    return ok(text);
  },
};

export const instancesCheck: Check = {
  name: 'instances',
  async run({ pool, config }) {
    const running = await selectInstances(pool, { staleAfterSeconds: 3 * config.heartbeatSeconds, afterId: undefined, running: true, limit: 200 });
    if (running.length === 0) {
      return warn('no instance is running against this database: start the service (backplane serve)');
    }
    const versions = [...new Set(running.map((row) => row.version))].sort();
    if (versions.length > 1) {
      const counts = versions.map((version) => `${version} (${running.filter((row) => row.version === version).length})`);
      return warn(`${running.length} instances run mixed versions ${counts.join(', ')}: expected during a rollout only; finish or roll it back`);
    }
    return ok(`${running.length} running, all ${versions[0]}`);
  },
};

export const jobsCheck: Check = {
  name: 'jobs',
  async run({ jobs }) {
    const overview = await describeJobs(jobs);
    const stranded = overview.queues.filter((queue) => queue.queued > 0 && queue.instances.length === 0);
    if (stranded.length) {
      return fail(
        `${stranded.map((queue) => `${queue.queued} run(s) queued on ${queue.name}`).join(', ')} and no running instance consumes the queue: start instances with job workers (APP_JOB_WORKERS, APP_JOB_QUEUES)`,
      );
    }
    if (overview.failing.length) {
      return warn(`last run failed: ${overview.failing.map((job) => job.name).join(', ')}; see backplane jobs list and GET /ops/jobs/runs?state=failed`);
    }
    return ok(`${overview.jobs.length} jobs, none failing or stranded`);
  },
};

export const limiterCheck: Check = {
  name: 'rate_limiter',
  async run({ config, fetchText, hostNow }) {
    const url = `http://127.0.0.1:${config.metricsPort}/metrics`;
    let text: string;
    try {
      const response = await fetchText(url);
      text = response.text;
    } catch {
      return skip(`not checked: no instance answers on ${url} on this host`);
    }
    const match = /^backplane_ratelimit_alone_since_seconds(?:\{[^}]*\})? ([\d.e+]+)$/m.exec(text);
    const since = match ? Number(match[1]) : 0;
    if (!since) {
      return ok('the database decides rate limits');
    }
    const seconds = Math.round(hostNow() / 1000 - since);
    const message = `an instance on this host has decided rate limits alone for ${seconds} s (database errors or slow decisions)`;
    return seconds > ALONE_FAIL_SECONDS
      ? fail(`${message}: check the database's load and the limiter's connections`)
      : warn(`${message}: watch backplane_ratelimit_fallbacks_total`);
  },
};

export const providersCheck: Check = {
  name: 'providers',
  async run({ config, fetchText }) {
    if (config.oidcProviders.length === 0) {
      return skip('not checked: no sign-in providers configured');
    }
    const broken: string[] = [];
    for (const provider of config.oidcProviders) {
      const url = `${provider.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      try {
        const response = await fetchText(url);
        if (response.status !== 200) {
          broken.push(`${provider.name} (${url}: HTTP ${response.status})`);
        }
      } catch (error) {
        broken.push(`${provider.name} (${url}: ${(error as Error).message})`);
      }
    }
    if (broken.length) {
      return fail(`unreachable: ${broken.join(', ')}; check the issuer in APP_OIDC_PROVIDERS and outbound network access`);
    }
    return ok(`${config.oidcProviders.length} reachable: ${config.oidcProviders.map((provider) => provider.name).join(', ')}`);
  },
};

// Private ranges a load balancer or ingress forwards from; loopback is left out (local development).
const PROXY_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'];
const PROXY_MIN_EVENTS = 10;

export const trustedProxiesCheck: Check = {
  name: 'trusted_proxies',
  async run({ pool, config }) {
    if (config.trustedProxies.length > 0) {
      return ok(`APP_TRUSTED_PROXIES set (${config.trustedProxies.length} range(s))`);
    }
    // Requests' addresses are seen only by the instances; the audit log keeps the last day's.
    const { rows } = await pool.query<{ total: number; proxied: number }>(
      `select count(*)::int as total, count(*) filter (where client_ip << any($1::inet[]))::int as proxied
       from audit_events where occurred_at > now() - interval '1 day' and client_ip is not null`,
      [PROXY_RANGES],
    );
    const { total, proxied } = rows[0]!;
    if (total >= PROXY_MIN_EVENTS && proxied * 10 >= total * 9) {
      return warn(
        `APP_TRUSTED_PROXIES is unset and ${proxied} of the last day's ${total} audited requests came from private addresses: the service seems to run behind a proxy, so every client looks the same to sign-in limits and the audit log; set APP_TRUSTED_PROXIES to the proxies' range`,
      );
    }
    return ok(`APP_TRUSTED_PROXIES unset; ${proxied} of ${total} audited requests in the last day came from private addresses`);
  },
};

/** In the order they print; the database checks run only when the database answered. */
export const DATABASE_CHECKS: Check[] = [databaseCheck, migrationsCheck, clockCheck, poolSizeCheck, instancesCheck, jobsCheck, trustedProxiesCheck];
export const LOCAL_CHECKS: Check[] = [apiFilesCheck, limiterCheck, providersCheck];

/** Runs one check; a check that throws is a fail naming the error, never a crash of doctor. */
export async function runCheck(check: Check, context: DoctorContext): Promise<CheckResult> {
  try {
    return { check: check.name, ...(await check.run(context)) };
  } catch (error) {
    return { check: check.name, status: 'fail', message: `could not check: ${(error as Error).message}` };
  }
}
