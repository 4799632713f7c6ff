import type Koa from 'koa';
import type { Logger } from 'pino';
import type pg from 'pg';
import type { Registry } from 'prom-client';
import type { AgingTarget } from './db/aging.ts';
import type { NotificationListener } from './db/listener.ts';
import type { InstrumentedPool } from './db/pool.ts';
import type { StatusTable } from './errors.ts';
import type { AnyRoute, RouteDefinition } from './http/route.ts';
import type { JobDefinition } from './jobs.ts';
import type { ReadinessCheck } from './readiness.ts';
import type { RunTask } from './tasks/pool.ts';
import type { SecretBox } from './secrets/secretBox.ts';
import type { RecordAudit } from './audit.ts';
import type { SettingsReader } from './settingsReader.ts';

/** A route of a module whose handlers receive `D` (its created `routeDeps`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route's input schemas vary; its dependencies do not
export type Route<D> = RouteDefinition<any, any, any, D>;

/** One runtime setting a module declares; the settings module serves every module's (names are public API). */
export type SettingDeclaration =
  | { name: string; group: string; description: string; kind: 'integer'; default: number; min: number; max: number; reasonRequired?: boolean }
  | { name: string; group: string; description: string; kind: 'boolean'; default: boolean; reasonRequired?: boolean }
  /** Held in whole seconds. */
  | { name: string; group: string; description: string; kind: 'duration'; default: number; min: number; max: number; reasonRequired?: boolean }
  | { name: string; group: string; description: string; kind: 'string'; default: string; maxLength: number; reasonRequired?: boolean };

/** A flag of a module's CLI command. */
export interface CommandFlag {
  /** Whether the flag takes a value or stands alone. */
  type: 'string' | 'boolean';
  /** One line for --help. */
  description: string;
  /** What the value stands for in usage lines: E, N, 15m. */
  value?: string;
  /** Whether the flag may be given more than once (its values are then a list). */
  multiple?: boolean;
}

/** A command or subcommand as data: parsing, --help and the command list come from it. */
export interface CommandShape {
  /** The word that names it on the command line. */
  name: string;
  /** One line for --help and the command list. */
  summary: string;
  /** Positional words after the (sub)command name, in usage form: ['NAME']. */
  args?: string[];
  /** Its flags by name, without the leading dashes. */
  flags?: Record<string, CommandFlag>;
  /** Subcommands, each parsed and helped like a command. */
  subcommands?: CommandShape[];
}

/** A parsed command line: positional words (the subcommand first) and --flags (repeatable ones as lists). */
export interface CommandLine {
  /** The words that are not flags, the subcommand's name first. */
  positional: string[];
  /** Each flag given, by name, with its values in order. */
  values: Map<string, string[]>;
}

/** A CLI command a module adds to the application's `backplane` command (ADR 0110). */
export interface ModuleCommand extends CommandShape {
  /** Resolves with the exit code (0 unless given). */
  run(command: CommandLine): Promise<number | void>;
}

/** What a module's primary work is given: the pod's primary has no instance, only these. */
export interface PrimaryContext {
  /** The application's configuration (src/app/config.ts). */
  config: unknown;
  /** The primary's logger. */
  logger: Logger;
  /** The database the instances use, migrated. */
  databaseUrl: string;
  /** The primary's registry, served on the metrics port. */
  registry: Registry;
}

/** Work a module runs in the pod's primary process, beside the instances (the rate-limit decisions today). */
export interface PrimaryWork {
  /** Called for each instance the primary forks. */
  serve?(worker: unknown): void;
  /** Stops the work; called after every instance has stopped. */
  close(): Promise<void>;
}

/** Answers a request before Koa sees it with the error it returns (refusals known from memory); undefined lets it through. */
export type { EarlyAnswer } from './http/requestFrame.ts';
import type { EarlyAnswer } from './http/requestFrame.ts';

/** HTTP middleware by phase, outermost first across modules in the application's order. */
export interface ModuleMiddleware {
  /** Before Koa parses anything. */
  early?: EarlyAnswer;
  /** After the request line and headers, before the body is read. */
  beforeBody?: Koa.Middleware[];
  /** Around the router, once the body is parsed. */
  aroundRouter?: Koa.Middleware[];
}

/** What every module of an instance is given; `use` reaches the api of a module named in `needs`. */
export interface ModuleContext {
  /** The instance's database pool. */
  pool: pg.Pool;
  /** PostgreSQL notifications, on one connection shared by the modules. */
  listener: NotificationListener;
  /** The instance's logger. */
  logger: Logger;
  /** The instance's metrics, served on the metrics port. */
  registry: Registry;
  /** This instance's id, as its logs, metrics and heartbeat name it. */
  instanceId: string;
  /** Runs a task on the instance's worker threads (plain data in and out). */
  runTask: RunTask;
  /** False in CLI commands: nothing runs in the background, modules only serve their api. */
  serving: boolean;
  /** The application's configuration (src/app/config.ts). */
  config: unknown;
  /** The api of a module named in `needs`, by its name (typed by the caller). */
  use<Api>(name: string): Api;
  /** The api of a module named in `needs`, typed by the module itself: `context.use(settingsModule).reader`. */
  use<M extends AnyModule>(module: M): ApiOf<M>;
  /**
   * Every module's settings, read from memory, for a module that names `settings` in `needs`. Kept
   * typed by the module's own declarations: `const settings: SettingsReader<NotesSetting> = context.settings`.
   */
  readonly settings: SettingsReader;
  /** Records an audit event in the caller's transaction, for a module that names `audit` in `needs`. */
  readonly recordAudit: RecordAudit;
}

/** The api a module's `create` returns. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any route dependencies and permissions
export type ApiOf<M> = M extends ModuleDefinition<infer Api, any, any> ? Api : never;

/** A module created on an instance. */
export interface Started<Api, RouteDeps> {
  /** What other modules may use. */
  api: Api;
  /** What its route handlers receive. */
  routeDeps: RouteDeps;
  /** Jobs that run this module's code; the jobs module schedules them. */
  jobs?: JobDefinition[];
  /** Reported by /readyz and /ops/system. */
  readiness?: ReadinessCheck[];
  /** HTTP middleware, by phase. */
  middleware?: ModuleMiddleware;
  /** Called once the instance serves. */
  start?(): void;
  /** Stops taking new work and lets work in progress finish within the timeout, beside the requests' drain. */
  drain?(timeoutMs: number): Promise<void>;
  /** Stops what the module runs; modules close in the reverse of their creation order. */
  close?(): void | Promise<void>;
}

/** What a module declares without a database: every list the composition root collects comes from here. */
export interface ModuleDeclarations<Permission extends string = string, RouteDeps = unknown> {
  /** Lowercase letters, digits and _: the namespace of what it declares. */
  name: string;
  /** Other modules this one uses, by name: checked when the application is composed. */
  needs?: readonly string[];
  /** Permission name → what holding it allows: `<module>.…`, lowercase words joined by dots. Names are public API. */
  permissions?: Readonly<Record<Permission, string>>;
  /** Static data: each handler receives `routeDeps` of the created module when it runs; its permission is one declared above, its problem codes in some module's `statuses` or the platform's (checked at composition). */
  routes?: readonly (Route<RouteDeps> & { permission?: NoInfer<Permission> | undefined })[];
  /** Error code → HTTP status of the codes this module throws. */
  statuses?: StatusTable;
  /** Named `<module>.…`. */
  settings?: readonly SettingDeclaration[];
  /** Audit action (`<module>.…`) → what the event records. */
  auditActions?: Readonly<Record<string, string>>;
  /** How the module's tables age and are purged by the retention job. */
  retention?: readonly AgingTarget[];
  /** Scheduled jobs (named `<module>_…`) whose handlers need nothing from `create` (the job context gives the pool, tasks and logger). */
  jobs?: readonly JobDefinition[];
  /** CLI commands added to the application's `backplane` command. */
  commands?: readonly ModuleCommand[];
  /** The folder of the module's own SQL migrations (`new URL('./migrations', import.meta.url)`): run with Backplane's and the application's, in one order by version, under one lock (ADR 0120). */
  migrations?: string | URL;
  /** Work in the pod's primary, started once per pod. */
  primary?(context: { config: unknown; logger: Logger }): PrimaryWork | undefined;
  /** Work in the pod's primary that needs the database or the metrics (`primary` has neither): started after migrations, before the instances; closed after they stop. */
  primaryWork?(context: PrimaryContext): PrimaryWork | undefined | Promise<PrimaryWork | undefined>;
}

/** A capability as an application composes it (ADR 0120). */
export interface ModuleDefinition<Api = unknown, RouteDeps = unknown, Permission extends string = string> extends ModuleDeclarations<Permission, RouteDeps> {
  /** Creates the module on an instance (or in a command), once the modules it needs are. */
  create?(context: ModuleContext): Started<Api, RouteDeps> | Promise<Started<Api, RouteDeps>>;
}

/** Any module, whatever its api, route dependencies and permissions: what an application lists. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each module has its own api and route dependencies
export type AnyModule = ModuleDefinition<any, any, any>;

/**
 * Declares a module. Called without type arguments, it infers them, and the compiler checks each
 * route's permission against the declared ones; type arguments given by hand
 * (`defineModule<undefined, Deps>`) turn that check off, leaving it to composition.
 */
export function defineModule<Api = unknown, RouteDeps = unknown, Permission extends string = string>(
  module: ModuleDefinition<Api, RouteDeps, Permission>,
): ModuleDefinition<Api, RouteDeps, Permission> {
  return module;
}

/**
 * What Backplane's own modules are given beyond ModuleContext, which an application's module has no
 * use for (issue 46): the configuration typed by what the module reads, pieces of the instance, and
 * what the composition collects from every module. Each module names its own (`AuthContext`);
 * src/app/modules.ts builds one context the compiler checks against all of them. Not exported by `backplane`.
 */
export interface BackplaneContext<Config = unknown> extends ModuleContext {
  config: Config;
  /** The same pool, with its metrics. */
  pool: InstrumentedPool;
  /** PostgreSQL itself, bypassing a transaction pooler (LISTEN, the purges' session options). */
  directUrl: string;
  /** The build this instance runs and when it started. */
  build: { version: string; commit: string | undefined; buildTime: string | undefined; modified: boolean; startedAt: Date };
  /** The box for secrets at rest and its key text (threads open secrets with it), read when first asked. */
  secrets(): { box: SecretBox; keyText: string };
  /** Static jobs of every module with those bound by the modules created so far; their readiness checks; every retention target; the document. */
  collected: { jobs(): JobDefinition[]; readiness(): ReadinessCheck[]; retention: readonly AgingTarget[]; document(): Record<string, unknown> };
  /** The api of a module created after this one, once it is (retention reads the jobs module's status). */
  later<M extends AnyModule>(module: M): ApiOf<M>;
}

/** Every route of some modules, for the document (no dependencies needed). */
export const routesOf = (modules: readonly { routes?: readonly AnyRoute[] | undefined }[]): AnyRoute[] => modules.flatMap((module) => module.routes ?? []);
