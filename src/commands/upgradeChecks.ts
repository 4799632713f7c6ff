import type pg from 'pg';
import { type Config, ConfigError } from '../app/config.ts';
import { listRoles } from '../modules/auth/index.ts';
import { countRunningInstances } from '../modules/releases/index.ts';
import { describeRetention } from '../modules/retention/index.ts';
import { migrationStatus } from '../platform/db/migrations.ts';
import { withDatabase } from './database.ts';
import type { ActionCheck, ReleaseNotes } from './releases/notes.ts';
import { type CliServices, withServices } from './services.ts';
import { appliedMigrationsIn, migrationClash } from './upgradeMigrationClash.ts';
import { UpgradeRefused, oneLine } from './upgradeRepository.ts';

export interface UpgradeContext {
  pool: pg.Pool;
  config: Config;
  services: CliServices;
  /** The overlay's kustomization.yaml as text, for what the deployment configures. */
  overlay: string;
  /** Replicas the overlay asks for. */
  replicas: number;
}

export interface Evaluation {
  /** True when this deployment must act before deploying. */
  needed: boolean;
  finding: string;
}

const number = (value: number) => value.toLocaleString('en-US');

/** Each release-note action, evaluated against the live database and the deployment, with numbers. */
export const ACTION_CHECKS: Record<ActionCheck, (context: UpgradeContext) => Promise<Evaluation>> = {
  async audit_retention({ services }) {
    const overview = await describeRetention(services.retention);
    const audit = overview.kinds.find((kind) => kind.kind === 'audit_events')!;
    if (!audit.enabled || audit.past_cutoff === 0) {
      return {
        needed: false,
        finding: audit.enabled ? `no audit events are older than ${audit.value}` : 'the retention job is disabled: nothing will be deleted',
      };
    }
    return {
      needed: true,
      finding:
        `the first retention run will delete ${number(audit.past_cutoff)} audit events older than ${audit.value} (oldest: ${audit.oldest?.slice(0, 10)}); ` +
        'raise audit.retention (backplane settings set audit.retention 87600h --reason R) or disable the retention job first (backplane jobs disable retention --reason R)',
    };
  },

  async ops_system_read({ pool }) {
    const lacking = (await listRoles(pool)).filter((role) => !role.builtin && !role.permissions.includes('ops.system.read')).map((role) => role.name);
    return lacking.length
      ? { needed: true, finding: `custom roles without ops.system.read: ${lacking.join(', ')}; add it where those operators need the new endpoints` }
      : { needed: false, finding: 'no custom role lacks ops.system.read' };
  },

  async shared_limits({ pool, config, replicas }) {
    const running = await countRunningInstances(pool, 3 * config.heartbeatSeconds);
    const instances = Math.max(running, replicas);
    return instances > 1
      ? {
          needed: true,
          finding: `several instances (${running} running, ${replicas} replicas in the overlay): sign-in limits become stricter; raise auth.login_attempts and auth.ip_requests_per_minute if needed`,
        }
      : { needed: false, finding: 'one instance: limits are unchanged' };
  },

  async trusted_proxies({ overlay }) {
    return /APP_TRUSTED_PROXIES=\S+/.test(overlay)
      ? { needed: false, finding: 'APP_TRUSTED_PROXIES is set in the overlay' }
      : { needed: true, finding: "APP_TRUSTED_PROXIES is not set in the overlay: set it to your proxies' range if the service runs behind one" };
  },

  async migrations({ pool }) {
    const status = await migrationStatus(pool);
    return status.pending
      ? { needed: false, finding: `${status.pending} migration(s) pending; the upgrade applies them` }
      : { needed: false, finding: 'no migration pending' };
  },
};

export type EvaluatedChange = { release: ReleaseNotes; change: ReleaseNotes['changes'][number]; evaluation?: Evaluation };

/** The report's `releases`, the same for a deployment repository and an application. */
export const releaseReport = (releases: ReleaseNotes[], evaluated: EvaluatedChange[]) =>
  releases.map((release) => ({
    version: release.version,
    changes: evaluated
      .filter((item) => item.release === release)
      .map((item) => ({
        change: item.change.change,
        action: item.change.action,
        check: item.change.check ?? null,
        needed: item.evaluation?.needed ?? null,
        finding: item.evaluation?.finding ?? null,
      })),
  }));

/** In an application: this release's migrations and the application's folders, checked for a version both use. */
export interface ClashCheck {
  release: { dir: string; version: string };
  folders: string[];
}

/** Each release's changes, evaluated against the database: refused on one never migrated or ahead of this release. */
export async function evaluateReleases(releases: ReleaseNotes[], overlay: string, replicas: number, clash?: ClashCheck) {
  try {
    return await evaluateAgainstDatabase(releases, overlay, replicas, clash);
  } catch (error) {
    if (error instanceof UpgradeRefused || error instanceof ConfigError) {
      throw error;
    }
    throw new UpgradeRefused(`the database cannot be read (${oneLine(error)}): check DATABASE_URL; nothing changed`);
  }
}

async function evaluateAgainstDatabase(releases: ReleaseNotes[], overlay: string, replicas: number, check?: ClashCheck) {
  return withDatabase(
    async (pool, { url, config }) => {
      // Before the migrations are listed, which refuses a clash with advice that is wrong for an applied migration.
      const clash = check && (await migrationClash(check.release, check.folders, () => appliedMigrationsIn(pool)));
      if (clash) {
        throw new UpgradeRefused(`${clash}; nothing was changed`);
      }
      const status = await migrationStatus(pool);
      if (status.current === 0) {
        throw new UpgradeRefused(
          "the database has no migrations applied: it is not this deployment's database or the deployment never started; check DATABASE_URL",
        );
      }
      if (status.unknown.length) {
        throw new UpgradeRefused(
          `the database holds migrations this release does not know (${status.unknown.join(', ')}): it runs a newer release, and upgrade never goes backwards`,
        );
      }
      try {
        return await withServices(pool, url, config, async (services) => {
          const context = { pool, config, services, overlay, replicas };
          const results: EvaluatedChange[] = [];
          for (const release of releases) {
            for (const change of release.changes) {
              results.push({ release, change, ...(change.check ? { evaluation: await ACTION_CHECKS[change.check](context) } : {}) });
            }
          }
          return results;
        });
      } catch (error) {
        throw new UpgradeRefused(`could not evaluate the release notes against the database (${oneLine(error)}): nothing changed`);
      }
    },
    { schema: 'any' },
  );
}
