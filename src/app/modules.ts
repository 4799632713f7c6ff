import { loadApiExamples } from './apiExamples.ts';
import { isOpenDuringMaintenance } from '../modules/maintenance/index.ts';
import { countsPerAddress } from '../modules/ratelimit/index.ts';
import { platformStatuses } from '../platform/http/errors.ts';
import { buildOpenApiDocument } from '../platform/http/openapi.ts';
import { mergeStatusTables } from '../platform/http/problem.ts';
import { type AnyRoute, type BoundRoute, bindRoutes } from '../platform/http/route.ts';
import type { AnyModule, ApiOf, ModuleDefinition, ModuleMiddleware, Started } from '../platform/module.ts';
import type { RateLimitSettings } from '../modules/ratelimit/index.ts';
import { type Application, compose } from './application.ts';
import type { BackplaneModulesContext } from './backplaneModules.ts';
import { encryptionKeyText, openSecretBox } from './encryptionKey.ts';
import type { Config } from './config.ts';
import type { Platform } from './platform.ts';
import { routesOf } from '../platform/module.ts';
import type { AuditApi } from '../platform/audit.ts';
import type { SettingsApi } from '../platform/settingsReader.ts';

export const API_INFO = {
  title: 'Backplane',
  description: 'Operations interface of a clustered Node.js back end: health, settings, jobs, audit, retention, maintenance and sign-in protections.',
};

/** Codes a route answers before its handler runs: maintenance mode, and the per-address limit on sign-in. */
const implicitProblems = (route: AnyRoute): string[] => [
  ...(isOpenDuringMaintenance(route.method, route.path) ? [] : ['maintenance']),
  ...(countsPerAddress(route.method, route.path) ? ['rate_limited'] : []),
];

/** The OpenAPI document, from the modules' static routes and status tables alone (no database, no instance). */
export const apiDocument = (application: Application, version: string): Record<string, unknown> => ({
  ...buildOpenApiDocument(
    routesOf(application.modules),
    { ...API_INFO, version },
    { statuses: mergeStatusTables([platformStatuses, ...compose(application).statuses]), implicitProblems, examples: loadApiExamples() },
  ),
  // The audit actions the modules declare, a catalogue beside the problem codes: public API, added to, never renamed.
  'x-audit-actions': Object.fromEntries([...compose(application).auditActions].sort(([a], [b]) => a.localeCompare(b))),
});

type AnyStarted = { module: ModuleDefinition; started: Started<unknown, unknown> };

export interface InstanceModules {
  /** Every route, bound to its module's dependencies, for the router. */
  routes: BoundRoute[];
  /** Every module's middleware, in the application's order. */
  middleware: ModuleMiddleware[];
  /** The api of a created module. */
  api<Api>(name: string): Api;
  /** Starts what modules run once the instance serves (heartbeat, scheduler, workers). */
  start(): void;
  /** Lets modules' work in progress finish within the timeout (job runs), beside the requests' drain. */
  drain(timeoutMs: number): Promise<void>;
  /** Closes every module, in the reverse of the order they were created. */
  close(): Promise<void>;
}

export interface ModuleOptions {
  rateLimits?: RateLimitSettings | undefined;
  rateLimitTimeoutMs?: number | undefined;
  /** False in commands: the modules serve their api, nothing runs in the background (no workers, no heartbeat). */
  serving?: boolean;
  /** Only these modules and what they need (commands create what they use). */
  only?: readonly string[];
}

/** The modules named and every module they need, in the application's order. */
function neededModules(application: Application, only: readonly string[] | undefined): readonly ModuleDefinition[] {
  if (!only) {
    return application.modules;
  }
  const byName = new Map(application.modules.map((module) => [module.name, module]));
  const wanted = new Set<string>();
  const visit = (name: string) => {
    if (!wanted.has(name) && byName.has(name)) {
      wanted.add(name);
      (byName.get(name)!.needs ?? []).forEach(visit);
    }
  };
  only.forEach(visit);
  return application.modules.filter((module) => wanted.has(module.name));
}

/**
 * The one composition root: creates the application's modules of one instance (or one command), in
 * order, each given the api of the modules it needs; a module that fails to start closes those before it.
 */
export async function createModules(application: Application, config: Config, platform: Platform, options: ModuleOptions = {}): Promise<InstanceModules> {
  const composed = compose(application);
  const created: AnyStarted[] = [];
  const apis = new Map<string, unknown>();
  const closeAll = async () => {
    for (const { started } of [...created].reverse()) {
      await started.close?.();
    }
  };
  const serving = options.serving ?? true;
  try {
    for (const module of neededModules(application, options.only)) {
      const needs = new Set(module.needs ?? []);
      const nameOf = (target: string | AnyModule) => (typeof target === 'string' ? target : target.name);
      const use = <Api>(target: string | AnyModule): Api => {
        const name = nameOf(target);
        if (!needs.has(name) || !apis.has(name)) {
          throw new Error(`module ${module.name} uses module ${name} without naming it in its needs`);
        }
        return apis.get(name) as Api;
      };
      const context: BackplaneModulesContext = {
        pool: platform.pool,
        listener: platform.listener,
        logger: platform.logger,
        registry: platform.registry,
        instanceId: platform.instanceId,
        runTask: platform.tasks.runTask,
        serving,
        config,
        directUrl: platform.directUrl,
        build: { ...platform.build, startedAt: platform.startedAt },
        secrets: () => ({ box: openSecretBox(config), keyText: encryptionKeyText(config) }),
        rateLimits: { decide: platform.rateLimitDecisions, limits: options.rateLimits, timeoutMs: options.rateLimitTimeoutMs },
        collected: {
          jobs: () => {
            // A job bound by its module's create replaces the one it declared for commands.
            const bound = created.flatMap(({ started }) => started.jobs ?? []);
            return [...composed.jobs.filter((job) => !bound.some((other) => other.name === job.name)), ...bound];
          },
          readiness: () => created.flatMap(({ started }) => started.readiness ?? []),
          retention: composed.retention,
          document: () => apiDocument(application, platform.build.version),
        },
        later: <M extends AnyModule>(target: M) => {
          if (!apis.has(target.name)) {
            throw new Error(`module ${target.name} is not created yet`);
          }
          return apis.get(target.name) as ApiOf<M>;
        },
        use,
        get settings() {
          return use<SettingsApi>('settings').reader;
        },
        get recordAudit() {
          return use<AuditApi>('audit').recordAudit;
        },
      };
      const started = (await module.create?.(context)) ?? { api: undefined, routeDeps: undefined };
      created.push({ module, started });
      apis.set(module.name, started.api);
    }
    return {
      routes: created.flatMap(({ module, started }) => bindRoutes(module.routes ?? [], started.routeDeps)),
      middleware: created.flatMap(({ started }) => (started.middleware ? [started.middleware] : [])),
      api<Api>(name: string): Api {
        if (!apis.has(name)) {
          throw new Error(`application ${application.name} has no module ${name}`);
        }
        return apis.get(name) as Api;
      },
      start: () => created.forEach(({ started }) => started.start?.()),
      drain: async (timeoutMs) => void (await Promise.all(created.map(({ started }) => started.drain?.(timeoutMs)))),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
