import { type AuditContext, auditModule } from '../modules/audit/index.ts';
import { type AuthContext, authModule } from '../modules/auth/index.ts';
import { type HealthContext, healthModule } from '../modules/health/index.ts';
import { type IdentitiesContext, identitiesModule } from '../modules/identities/index.ts';
import { type JobsContext, jobsModule } from '../modules/jobs/index.ts';
import { maintenanceModule } from '../modules/maintenance/index.ts';
import { openApiModule } from '../modules/openapi/index.ts';
import { type RateLimitContext, rateLimitModule } from '../modules/ratelimit/index.ts';
import { type ReleasesContext, releasesModule } from '../modules/releases/index.ts';
import { type RetentionContext, retentionModule } from '../modules/retention/index.ts';
import { settingsModule } from '../modules/settings/index.ts';
import type { AnyModule } from '../platform/module.ts';

/** Backplane's own modules, in the order an instance creates them. */
export const backplaneModules: readonly AnyModule[] = [
  auditModule,
  settingsModule,
  releasesModule,
  rateLimitModule,
  authModule,
  maintenanceModule,
  identitiesModule,
  retentionModule,
  jobsModule,
  healthModule,
  openApiModule,
];

/** Whether a module is one of Backplane's own, whose names may also be in the `ops.` and `auth.` namespaces. */
export const isBackplaneModule = (module: AnyModule): boolean => backplaneModules.includes(module);

/** What Backplane's modules are given beyond the public context, each naming its own: src/app/modules.ts builds one that fits them all. */
export type BackplaneModulesContext = AuditContext &
  AuthContext &
  HealthContext &
  IdentitiesContext &
  JobsContext &
  RateLimitContext &
  ReleasesContext &
  RetentionContext;
