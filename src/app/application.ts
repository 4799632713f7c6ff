import { declarePermissions } from '../modules/auth/index.ts';
import { declareSettings } from '../modules/settings/index.ts';
import type { AgingTarget } from '../platform/db/aging.ts';
import type { StatusTable } from '../platform/errors.ts';
import type { JobDefinition } from '../platform/jobs.ts';
import type { AnyModule, ModuleCommand, SettingDeclaration } from '../platform/module.ts';
import { isBackplaneModule } from './backplaneModules.ts';
import { BACKPLANE_NAMESPACES } from '../platform/declaredNames.ts';
import { CompositionError, checkNamespaces, checkRoutes, refused } from './compositionChecks.ts';
import { APPLICATION_SET, BACKPLANE_SET, useApplicationMigrations, useModuleMigrations } from '../platform/db/migrationSets.ts';

/** An application: Backplane's modules and its own, composed once and used by `serve`, every command, the tests and the benches. */
export interface Application {
  /** The application's name: its package's, or `backplane` for Backplane alone. */
  readonly name: string;
  /** In the order an instance creates them (modules that collect from the others last). */
  readonly modules: readonly AnyModule[];
  /** The folder of the application's own migrations, run after Backplane's under the same lock. */
  readonly migrations?: string | undefined;
}

/** What defineApplication composes. */
export interface ApplicationOptions {
  /** The application's name (its package's). */
  name: string;
  /** `backplaneModules` and the application's own, one line each. */
  modules: readonly AnyModule[];
  /** The folder of the application's own migrations, run after Backplane's under the same lock. */
  migrations?: string | undefined;
}

/** The lists the composition root collects from the modules; none is written anywhere else. */
export interface Composed {
  permissions: ReadonlyMap<string, string>;
  settings: readonly SettingDeclaration[];
  jobs: readonly JobDefinition[];
  retention: readonly AgingTarget[];
  auditActions: ReadonlyMap<string, string>;
  statuses: readonly StatusTable[];
  commands: readonly ModuleCommand[];
}

export { CompositionError };

/** Modules that collect from every other one (jobs, readiness, the document) are created after the rest. */
const COLLECTING = new Set(['jobs', 'health', 'openapi']);

/**
 * Composes an application: names are unique, every module's needs are in it and created before it
 * (a clear error names the missing module), each declared name (permission, setting, job,
 * audit action, error code, route) belongs to one module and is namespaced by it. A refusal is one line.
 */
export function defineApplication(options: ApplicationOptions): Application {
  const modules = [...options.modules.filter((m) => !COLLECTING.has(m.name)), ...options.modules.filter((m) => COLLECTING.has(m.name))];
  const seen = new Set<string>();
  for (const module of modules) {
    if (!/^[a-z][a-z0-9_]*$/.test(module.name)) {
      throw refused(`module name ${JSON.stringify(module.name)} is not lowercase letters, digits and _`);
    }
    if (seen.has(module.name)) {
      throw refused(`module ${module.name} is listed twice`);
    }
    if (BACKPLANE_NAMESPACES.includes(module.name) && !isBackplaneModule(module)) {
      throw refused(`module ${module.name}: ${module.name} is Backplane's namespace, name the module otherwise`);
    }
    seen.add(module.name);
    // A module's migrations are listed under its name, beside the sets `backplane` and `application`.
    if (module.migrations !== undefined && [BACKPLANE_SET, APPLICATION_SET].includes(module.name)) {
      throw refused(`module ${module.name} declares migrations: a module with migrations may not be named ${module.name}`);
    }
  }
  const position = new Map(modules.map((module, index) => [module.name, index]));
  for (const [index, module] of modules.entries()) {
    for (const need of module.needs ?? []) {
      const at = position.get(need);
      if (at === undefined) {
        throw refused(`module ${module.name} needs module ${need}, which application ${options.name} does not list`);
      }
      if (at > index) {
        throw refused(`module ${module.name} needs module ${need}: list ${need} before ${module.name}`);
      }
    }
  }
  const application: Application = { name: options.name, modules, migrations: options.migrations };
  compose(application);
  return application;
}

const composedOf = new WeakMap<Application, Composed>();

/** Every list the modules declare, collected once per application; a name declared twice fails. */
export function compose(application: Application): Composed {
  const known = composedOf.get(application);
  if (known) {
    return known;
  }
  const owners = new Map<string, string>();
  const statusOf = new Map<string, string>();
  const claim = (kind: string, name: string, module: string) => {
    if (kind.startsWith('error code')) {
      const known = statusOf.get(kind);
      if (known !== undefined && known !== name) {
        throw refused(`${kind.slice(0, -3)} is answered with status ${known} and ${name} (module ${module})`);
      }
      statusOf.set(kind, name);
      return;
    }
    const key = `${kind} ${name}`;
    const owner = owners.get(key);
    if (owner !== undefined && owner !== module) {
      throw refused(`${kind} ${name} is declared by modules ${owner} and ${module}`);
    }
    owners.set(key, module);
  };
  const permissions = new Map<string, string>();
  const auditActions = new Map<string, string>();
  const settings: SettingDeclaration[] = [];
  const jobs: JobDefinition[] = [];
  const retention: AgingTarget[] = [];
  const commands: ModuleCommand[] = [];
  for (const module of application.modules) {
    for (const [name, description] of Object.entries<string>(module.permissions ?? {})) {
      claim('permission', name, module.name);
      permissions.set(name, description);
    }
    for (const [name, description] of Object.entries<string>(module.auditActions ?? {})) {
      claim('audit action', name, module.name);
      auditActions.set(name, description);
    }
    for (const setting of module.settings ?? []) {
      // Every change of a setting needs a reason (setting_reason_required): a declaration may say so, never waive it.
      if (setting.reasonRequired === false) {
        throw refused(`setting ${setting.name} of module ${module.name} declares reasonRequired: false: every change of a setting needs a reason`);
      }
      claim('setting', setting.name, module.name);
      settings.push(setting);
    }
    for (const job of module.jobs ?? []) {
      claim('job', job.name, module.name);
      jobs.push(job);
    }
    for (const target of module.retention ?? []) {
      claim('retention target', target.kind, module.name);
      retention.push(target);
    }
    for (const command of module.commands ?? []) {
      claim('command', command.name, module.name);
      commands.push(command);
    }
    // Modules may share a code (account_not_found) when they map it to the same status.
    for (const [code, status] of Object.entries(module.statuses ?? {})) {
      claim(`error code ${code} as`, String(status), module.name);
    }
  }
  // Names are claimed first, so a name two modules declare is refused naming both.
  application.modules.forEach(checkNamespaces);
  checkRoutes(application.modules, permissions);
  const composed: Composed = { permissions, settings, jobs, retention, auditActions, statuses: application.modules.map((m) => m.statuses ?? {}), commands };
  composedOf.set(application, composed);
  // Roles may grant any permission a module of this application declares (roles create --permission notes.read).
  declarePermissions(permissions);
  declareSettings(settings);
  return composed;
}

let current: Application | undefined;

/** The application this process runs: set by `runCli`; Backplane's modules alone by default. */
export function useApplication(application: Application): void {
  current = application;
  useApplicationMigrations(application.migrations);
  useModuleMigrations(application.modules.flatMap((module) => (module.migrations === undefined ? [] : [{ set: module.name, dir: module.migrations }])));
}

export async function currentApplication(): Promise<Application> {
  current ??= (await import('./defaultApplication.ts')).backplaneApplication;
  return current;
}
