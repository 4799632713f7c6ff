import type { StatusTable } from './errors.ts';
import type { AnyRoute, RouteDefinition } from './http/route.ts';
import type { JobDefinition } from './jobs.ts';
import type { ReadinessCheck } from './readiness.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route's input schemas vary; its dependencies do not
export type Route<D> = RouteDefinition<any, any, any, D>;

/**
 * A capability as `src/app/` plugs it in. The static half (routes, statuses) is known without a
 * database: the OpenAPI document and the status table are built from it alone. `create` runs once
 * per instance, in dependency order, with the modules created before it.
 */
export interface Module<Needs, Api, RouteDeps> {
  name: string;
  /** Static data: each handler receives `routeDeps` of the created module when it runs. */
  routes: readonly Route<RouteDeps>[];
  /** Error code → HTTP status of the codes this module throws. */
  statuses: StatusTable;
  create(needs: Needs): Started<Api, RouteDeps> | Promise<Started<Api, RouteDeps>>;
}

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
  /** Called once the instance serves. */
  start?(): void;
  /** Stops taking new work and lets work in progress finish within the timeout, beside the requests' drain. */
  drain?(timeoutMs: number): Promise<void>;
  /** Stops what the module runs; modules close in the reverse of their creation order. */
  close?(): void | Promise<void>;
}

export function defineModule<Needs, Api, RouteDeps>(module: Module<Needs, Api, RouteDeps>): Module<Needs, Api, RouteDeps> {
  return module;
}

/** Every route of some modules, for the document (no dependencies needed). */
export const routesOf = (modules: readonly { routes: readonly AnyRoute[] }[]): AnyRoute[] => modules.flatMap((module) => module.routes);
