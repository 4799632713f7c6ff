import { authRoutes } from '../modules/auth/index.ts';
import type { SigningKey } from '../modules/auth/signingKeys.ts';
import type { Readiness } from '../modules/health/readiness.ts';
import { healthRoutes } from '../modules/health/routes.ts';
import type { SystemDeps } from '../modules/health/system.ts';
import { openApiRoutes } from '../modules/openapi/routes.ts';
import { releasesRoutes } from '../modules/releases/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import { buildOpenApiDocument } from '../platform/http/openapi.ts';
import type { AnyRoute } from '../platform/http/route.ts';

/** What route handlers use; route factories only close over it, so the table can be built without it. */
export interface RouteDeps {
  db: Queryable;
  system: SystemDeps & { readiness: Readiness };
  signingKey: SigningKey;
  heartbeatSeconds: number;
}

export const API_INFO = {
  title: 'Backplane',
  description: 'Operations interface of a clustered Node.js back end: health, settings, jobs, audit, retention, maintenance and sign-in protections.',
};

/** Every route of the API, for the router and the OpenAPI document alike. */
export function createRoutes(deps: RouteDeps, version: string): AnyRoute[] {
  const routes: AnyRoute[] = [
    ...healthRoutes(deps.system),
    ...releasesRoutes(deps.db, deps.heartbeatSeconds),
    ...authRoutes(deps),
  ];
  let document: Record<string, unknown> | undefined;
  routes.push(...openApiRoutes(() => (document ??= buildOpenApiDocument(routes, { ...API_INFO, version }))));
  return routes;
}

/** Dependencies for building the route table alone (generated files): any use throws. */
export function unusedRouteDeps(): RouteDeps {
  const unused: ProxyHandler<object> = {
    get: (_target, property) => {
      throw new Error(`route dependency ${String(property)} used while only documenting`);
    },
  };
  return new Proxy({}, unused) as RouteDeps;
}
