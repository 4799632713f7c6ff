import { STEP_EXIT_CODES } from './upgradeSteps.ts';
import { type CommandSpec, type Flags, JSON_FLAG, REASON_FLAG } from './args.ts';

export type Command = (flags: Flags) => Promise<number | void>;

export interface TopCommand extends CommandSpec {
  load: () => Promise<Command>;
}

const EMAIL = { email: { type: 'string', value: 'E', description: "the account's email address" } } as const;

/** Every command the binary knows, declared once: parsing, --help and the command list come from here. */
export const COMMANDS: TopCommand[] = [
  {
    name: 'serve',
    summary: 'run the clustered service',
    flags: {
      instances: { type: 'string', value: 'N', description: 'instances to run (default APP_INSTANCES)' },
      port: { type: 'string', value: 'P', description: 'port to listen on (default PORT)' },
    },
    load: async () => (await import('./serve.ts')).serve,
  },
  {
    name: 'migrate',
    summary: 'apply or inspect database migrations',
    subcommands: [
      { name: 'up', summary: 'apply pending migrations' },
      { name: 'status', summary: 'current, latest and pending migrations; exit 1 when the database is ahead of the code', flags: { ...JSON_FLAG } },
    ],
    load: async () => (await import('./migrate.ts')).migrate,
  },
  {
    name: 'accounts',
    summary: 'create, list, lock and unlock accounts (audited)',
    subcommands: [
      {
        name: 'create',
        summary: 'create an account',
        flags: {
          ...EMAIL,
          role: { type: 'string', value: 'R', multiple: true, description: 'a role to grant; repeatable' },
          'password-stdin': { type: 'boolean', description: 'read a password (12 characters or more) from stdin' },
        },
      },
      { name: 'list', summary: 'every account with its roles', flags: { ...JSON_FLAG } },
      { name: 'lock', summary: "end an account's access on every instance", flags: { ...EMAIL, ...REASON_FLAG } },
      { name: 'unlock', summary: 'allow a locked account again', flags: { ...EMAIL, ...REASON_FLAG } },
    ],
    load: async () => (await import('./accounts.ts')).accounts,
  },
  {
    name: 'roles',
    summary: 'create, grant and list roles (audited)',
    subcommands: [
      {
        name: 'create',
        summary: 'create a role with permissions',
        args: ['NAME'],
        flags: { permission: { type: 'string', value: 'P', multiple: true, description: 'a permission; repeatable' }, ...REASON_FLAG },
      },
      { name: 'grant', summary: 'grant a role to an account', args: ['EMAIL', 'ROLE'], flags: { ...REASON_FLAG } },
      { name: 'list', summary: 'every role with its permissions', flags: { ...JSON_FLAG } },
    ],
    load: async () => (await import('./roles.ts')).roles,
  },
  {
    name: 'token',
    summary: 'issue bearer tokens (audited)',
    subcommands: [
      {
        name: 'issue',
        summary: 'print a bearer token for an account on stdout',
        flags: { ...EMAIL, ttl: { type: 'string', value: '15m', description: 'lifetime as a Go duration (1.5h, 90m), at most 24h; default 15m' } },
      },
    ],
    load: async () => (await import('./token.ts')).token,
  },
  {
    name: 'keys',
    summary: 'rotate and list the token signing keys (rotation audited)',
    subcommands: [
      { name: 'rotate', summary: 'a new key signs at once; the old one verifies until its last token expires (24h)', flags: { ...REASON_FLAG } },
      { name: 'list', summary: 'signing and still-verifying keys', flags: { ...JSON_FLAG } },
    ],
    load: async () => (await import('./keys.ts')).keys,
  },
  {
    name: 'maintenance',
    summary: 'switch maintenance mode on every instance (audited)',
    subcommands: ['on', 'off'].map((name) => ({
      name,
      summary: name === 'on' ? 'answer 503 maintenance on every instance within a second' : 'serve normally again',
      flags: {
        message: { type: 'string', value: 'M', description: 'the detail clients see' },
        'retry-after': { type: 'string', value: '5m', description: 'the Retry-After clients get, as a Go duration' },
        ...REASON_FLAG,
      },
    })),
    load: async () => (await import('./maintenance.ts')).maintenance,
  },
  {
    name: 'settings',
    summary: 'read and change runtime settings, as PUT /ops/settings does (audited)',
    subcommands: [
      {
        name: 'list',
        summary: 'every setting with its value and default',
        flags: { group: { type: 'string', value: 'G', description: 'only this group' }, ...JSON_FLAG },
      },
      { name: 'get', summary: 'one setting', args: ['NAME'], flags: { ...JSON_FLAG } },
      {
        name: 'set',
        summary: 'change a setting; every instance follows within a second',
        args: ['NAME', 'VALUE'],
        flags: { ...REASON_FLAG, version: { type: 'string', value: 'N', description: 'the version last read; another current version fails' }, ...JSON_FLAG },
      },
    ],
    load: async () => (await import('./settings.ts')).settings,
  },
  {
    name: 'jobs',
    summary: 'list, run, enable and disable scheduled jobs (audited)',
    subcommands: [
      { name: 'list', summary: 'job definitions with schedule, state and next run', flags: { ...JSON_FLAG } },
      { name: 'run', summary: 'queue a run of a job now (refused while one is queued or running)', args: ['NAME'], flags: { ...JSON_FLAG } },
      { name: 'enable', summary: 'enable a job', args: ['NAME'], flags: { ...REASON_FLAG, ...JSON_FLAG } },
      { name: 'disable', summary: 'disable a job; a running run finishes', args: ['NAME'], flags: { ...REASON_FLAG, ...JSON_FLAG } },
    ],
    load: async () => (await import('./jobs.ts')).jobs,
  },
  {
    name: 'instances',
    summary: 'instances of the application that ran against this database',
    subcommands: [
      {
        name: 'list',
        summary: 'instances, newest first',
        flags: {
          running: { type: 'boolean', description: 'only running instances' },
          limit: { type: 'string', value: 'N', description: 'at most N (default 50)' },
          ...JSON_FLAG,
        },
      },
    ],
    load: async () => (await import('./instances.ts')).instances,
  },
  {
    name: 'audit',
    summary: 'read the audit log',
    subcommands: [
      {
        name: 'stats',
        summary: 'audit events counted by a field or by day',
        flags: {
          since: { type: 'string', value: 'T', description: 'start: RFC 3339 time or a Go duration back from now (24h); default 7 days back' },
          until: { type: 'string', value: 'T', description: 'end (exclusive): RFC 3339 time or a duration back from now; default now' },
          'group-by': { type: 'string', value: 'F', description: 'action, outcome, actor_kind, resource_type or day (default action)' },
          ...JSON_FLAG,
        },
      },
    ],
    load: async () => (await import('./audit.ts')).audit,
  },
  {
    name: 'doctor',
    summary: 'check configuration, database, migrations, clocks, capacity, instances, jobs and providers; exit 1 on any fail',
    flags: {
      'api-dir': {
        type: 'string',
        value: 'DIR',
        description: "the generated API files to compare (default the application's api/, or Backplane's outside an application)",
      },
      ...JSON_FLAG,
    },
    load: async () => (await import('./doctor.ts')).doctor,
  },
  {
    name: 'upgrade',
    summary:
      "upgrade an application (proved on a throw-away database and its tests; a failure puts everything back) or a deployment repository and the database to this release, with the release notes' actions evaluated; " +
      `in an application it exits ${Object.entries(STEP_EXIT_CODES)
        .map(([step, code]) => `${code} when ${step} fails`)
        .join(', ')}, 1 when refused, 128+N on a signal`,
    flags: {
      from: { type: 'string', value: 'vX.Y', description: 'the release the deployment runs; needed only without backplane.lock' },
      to: { type: 'string', value: 'vX.Y', description: "the release to upgrade to (default this backplane's version)" },
      dir: { type: 'string', value: 'PATH', description: 'the deployment repository (default the current directory)' },
      overlay: { type: 'string', value: 'PATH', description: 'the kustomize overlay in it (default deploy/kubernetes/overlays/production)' },
      package: {
        type: 'string',
        value: 'SPEC',
        description: 'in an application: where it gets the new backplane, an npm spec or a tarball (default ^the target)',
      },
      'dry-run': { type: 'boolean', description: 'show the actions and the plan; change nothing anywhere' },
      ...JSON_FLAG,
    },
    load: async () => (await import('./upgrade.ts')).upgrade,
  },
  {
    name: 'new',
    summary: 'create an application built on Backplane in a new or empty folder (writes files, installs nothing)',
    args: ['DIR'],
    flags: {
      name: { type: 'string', value: 'NAME', description: "the npm package name (default the folder's name)" },
      package: {
        type: 'string',
        value: 'SPEC',
        description: 'where the application gets backplane: an npm spec, or a tarball or folder for offline use (default ^this version)',
      },
      'no-git': { type: 'boolean', description: 'no git repository and first commit' },
    },
    load: async () => (await import('./new.ts')).newApplication,
  },
  {
    name: 'openapi',
    summary: 'write the generated API files',
    flags: { dir: { type: 'string', value: 'DIR', description: 'where to write them (default api)' } },
    load: async () => (await import('./openapi.ts')).openapi,
  },
];

export const ROOT: CommandSpec = { name: 'backplane', summary: 'Backplane operator commands', subcommands: COMMANDS };
