import { type AuditQueries, auditRoutes } from '../modules/audit/index.ts';
import { type RoleChanges, type SignInDeps, authRoutes, mfaRoutes, rolesRoutes, signInRoutes } from '../modules/auth/index.ts';
import type { SigningKey } from '../modules/auth/signingKeys.ts';
import type { Readiness } from '../modules/health/readiness.ts';
import { type IdentitiesDeps, identitiesRoutes } from '../modules/identities/index.ts';
import { healthRoutes } from '../modules/health/routes.ts';
import { type JobsServiceDeps, jobsRoutes } from '../modules/jobs/index.ts';
import type { SystemDeps } from '../modules/health/system.ts';
import { openApiRoutes } from '../modules/openapi/routes.ts';
import { releasesRoutes } from '../modules/releases/index.ts';
import { type RetentionServiceDeps, retentionRoutes } from '../modules/retention/index.ts';
import { type SettingsService, settingsRoutes } from '../modules/settings/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import { buildOpenApiDocument } from '../platform/http/openapi.ts';
import type { AnyRoute } from '../platform/http/route.ts';

/** What route handlers use; route factories only close over it, so the table can be built without it. */
export interface RouteDeps {
  db: Queryable;
  system: SystemDeps & { readiness: Readiness };
  signingKey: SigningKey;
  settings: SettingsService;
  audit: AuditQueries;
  roles: RoleChanges;
  signIn: SignInDeps;
  heartbeatSeconds: number;
  jobs: JobsServiceDeps;
  identities: IdentitiesDeps;
  retention: RetentionServiceDeps;
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
    ...signInRoutes(deps),
    ...mfaRoutes(deps),
    ...settingsRoutes(deps),
    ...auditRoutes(deps),
    ...rolesRoutes(deps),
    ...jobsRoutes(deps.jobs),
    ...identitiesRoutes(deps.identities),
    ...retentionRoutes(deps.retention),
  ];
  let document: Record<string, unknown> | undefined;
  routes.push(...openApiRoutes(() => (document ??= buildOpenApiDocument(routes, { ...API_INFO, version }))));
  return routes;
}

/**
 * Dependencies for building the route table alone (the generated files): route factories may pass
 * them around, but any call or read of a value throws.
 */
export function unusedRouteDeps(): RouteDeps {
  const placeholder = (path: string): unknown =>
    new Proxy(() => undefined, {
      get: (_target, property) => {
        if (typeof property === 'symbol') {
          throw new Error(`route dependency ${path} used while only documenting`);
        }
        return placeholder(`${path}.${property}`);
      },
      apply: () => {
        throw new Error(`route dependency ${path} called while only documenting`);
      },
    });
  return placeholder('deps') as RouteDeps;
}
