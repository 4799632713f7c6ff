/** Something an upgrade checks against the live database or the deployment before it is taken. */
export type ActionCheck = 'audit_retention' | 'ops_system_read' | 'shared_limits' | 'trusted_proxies' | 'migrations';

export interface ReleaseChange {
  change: string;
  /** What an existing deployment must do, as the release notes say it. */
  action: string;
  check?: ActionCheck;
}

export interface ReleaseNotes {
  version: string;
  changes: ReleaseChange[];
}

/**
 * Release notes as data, oldest first: the seed's v0.5 table, the seed's unreleased table and
 * Backplane's own changes since, which together make 0.6.0. An upgrade shows every release after
 * the deployment's and up to the target.
 */
export const RELEASES: ReleaseNotes[] = [
  { version: '0.4.0', changes: [] },
  {
    version: '0.5.0',
    changes: [
      {
        change: 'Audit events older than 365 days are deleted by the new daily retention job',
        action: 'To keep them longer, raise audit.retention (and ops.history_retention) before deploying, up to 87600h, or disable the retention job first',
        check: 'audit_retention',
      },
      {
        change: 'New endpoints GET /ops/system, /ops/audit/stats, /ops/jobs/overview, /ops/retention and permission ops.system.read',
        action: 'None for platform_admin and ops_viewer; custom roles need the permission',
        check: 'ops_system_read',
      },
      { change: 'Maintenance mode settings and a command switching it on or off', action: 'None; it is off by default' },
      { change: 'Release instance retention is the releases.instance_retention setting, default 90 days', action: 'None' },
      { change: 'A migration status command with an optional JSON output flag', action: 'None' },
      { change: 'Database', action: 'No new migrations' },
      { change: 'Library', action: 'Only additions; nothing removed' },
    ],
  },
  {
    version: '0.6.0-dev',
    changes: [
      { change: 'Third-party tokens are revoked by the job auth_revoke_tokens', action: 'None; the upgrade adds the job and the migration' },
      {
        change: 'Rate limits shared by all instances; settings auth.login_attempts, auth.login_window, auth.ip_requests_per_minute, auth.mfa_change_attempts',
        action: 'None for one instance; with several instances the effective limits become stricter, so raise the settings if needed',
        check: 'shared_limits',
      },
      { change: 'APP_TRUSTED_PROXIES', action: 'Set before deploying behind a proxy', check: 'trusted_proxies' },
      { change: 'New hourly job ratelimit_cleanup', action: 'None' },
      {
        change: "New migrations: token revocation, unlogged rate-limit buckets, and Backplane's own since",
        action: 'Run migrations as usual (the upgrade applies them under the advisory lock)',
        check: 'migrations',
      },
      { change: 'PostgreSQL older than 14 is refused at start', action: 'Upgrade the database server first' },
      {
        change: 'Migration 20261125000100 rebuilds the audit_events indexes on action, actor, resource and request in time order',
        action:
          "Plan the upgrade's window on a large audit log: landed before ADR 0125, it builds them without CONCURRENTLY, about 3 s per million events on 2 cores, and audit writes of both releases wait for it during the rollout; run the migrate Job in a quiet hour (later index builds run CONCURRENTLY)",
      },
      {
        change: 'Strict command line: unknown flags and missing values exit 2; --help never acts; tab-separated lists became aligned tables',
        action: 'Scripts that parsed accounts list or roles list output: use --json',
      },
      {
        change: 'backplane doctor, settings, jobs, instances, audit stats and upgrade commands; backplane.lock format v2',
        action: 'Commit backplane.lock with the deployment',
      },
      {
        change: 'The token signing key in auth_signing_keys is sealed with APP_ENCRYPTION_KEY at start (migration 20261126000400); backplane keys rotate',
        action:
          'Start with the APP_ENCRYPTION_KEY the instances use (a wrong one stops start-up in one line). Without APP_JWT_PRIVATE_KEY, an instance of the previous release that starts after the upgrade cannot read the sealed key: finish the rollout, and rotate only after it',
      },
      {
        change:
          "Metrics by Prometheus's conventions (issue 32, ADR 0126): label job became job_name; every series gained role (instance or primary); severities page/ticket became critical/warning; runbook_url absolute",
        action:
          'Dashboards, recording rules and alerts of your own: read job_name where they read exported_job (or job under honor_labels); Alertmanager routes on severity=page/ticket: route critical/warning/info; reload deploy/prometheus/rules.yaml (or the PrometheusRule) and the dashboard',
      },
      {
        change: '/readyz no longer turns 503 when the database fails; /readyz?verbose still lists it',
        action: 'None; to keep the old behaviour set APP_READINESS_REQUIRES_DATABASE=1',
      },
      {
        change: 'The Kubernetes kit mounts its secrets as files from a secretGenerator instead of the Secret backplane as variables',
        action:
          "Write the files into deploy/kubernetes/overlays/production/secrets/ from your Secret's values (same keys) before applying; delete the old Secret after the rollout",
      },
      {
        change: "Tracing follows a caller's sampled traceparent only from APP_TRUSTED_PROXIES",
        action:
          "Behind a proxy, set APP_TRUSTED_PROXIES to keep following its sampling decisions; have a proxy that forwards clients' traceparent drop or replace it",
      },
      {
        change: 'An empty or unreadable *_FILE stops start-up; a world-readable one warns',
        action: "Check each *_FILE names a non-empty file the service's user reads; chmod o-r (or defaultMode 0440 with fsGroup)",
      },
      {
        change: 'A database that refuses the password or does not answer at start exits 2 (was 1)',
        action: 'Scripts that branch on exit codes: 2 also means this now',
      },
      {
        change: "An application module's permissions, settings, audit actions and jobs are namespaced by its name; a route another route answers is refused",
        action: 'Rename them <module>.… (jobs <module>_…) and move clashing routes before upgrading; the application stops at start naming each',
      },
      {
        change:
          'Commands no longer apply pending migrations: every command but migrate up, serve and upgrade refuses a database whose schema is behind the code (one line, exit 2)',
        action:
          "Scripts that ran a command against a fresh or not yet migrated database: run backplane migrate up first (the Kubernetes kit's migrate Job already does)",
      },
      {
        change: 'platform_admin holds every permission of every module; the roles API and roles list show its entries as *',
        action: 'None; scripts reading platform_admin\'s permissions from roles list --json see ["*"] instead of ["ops.*"]',
      },
      {
        change:
          'Kubernetes kit: migrations run once per rollout in the Job backplane-migrate, not in an init container of every pod; pods wait for them (APP_MIGRATIONS=wait)',
        action: 'None: each image, settings and secrets get their own Job (backplane-migrate-<hash>); kubectl apply -k creates it (deploy/README.md step 3)',
      },
      {
        change: 'Kubernetes kit: the migrate Job is named backplane-migrate-<hash>, is no Argo CD hook, and its pods no longer carry app.kubernetes.io/name',
        action:
          'Plain kubectl: delete the old Job once (kubectl -n backplane delete job backplane-migrate --ignore-not-found); Argo CD, Flux: prune the old Job (nothing else)',
      },
      {
        change: 'Kubernetes kit: no APP_JWT_PRIVATE_KEY; access tokens are signed by the keys sealed in the database',
        action:
          'To keep your key: uncomment components/pinned-signing-key and secrets/APP_JWT_PRIVATE_KEY in the overlay; otherwise tokens it signed are refused once (clients refresh)',
      },
      {
        change: "runbook_url is <APP_PUBLIC_URL>/docs/runbooks/<alert>; the dashboard's console variable became the hidden backplane_url",
        action:
          'With the monitoring component: none. Rules or dashboard loaded by hand: replace https://backplane.example.com with your APP_PUBLIC_URL, set backplane_url',
      },
    ],
  },
];
