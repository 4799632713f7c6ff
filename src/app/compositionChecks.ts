import { BACKPLANE_NAMESPACES, type DeclaredKind, refusedName, routeKey } from '../platform/declaredNames.ts';
import { platformStatuses } from '../platform/http/errors.ts';
import type { AnyModule } from '../platform/module.ts';
import { isBackplaneModule } from './backplaneModules.ts';

/** An application that cannot be composed: one line naming the module (both, for a clash). */
export class CompositionError extends Error {
  /** How the error prints when something else reports it. */
  override readonly name = 'CompositionError';
}

let reportsUncaught = false;

/**
 * A refusal to throw. Uncaught (a bad declaration in the application's entry file, before `runCli`
 * can catch anything), it ends the process with its one line and exit 2 instead of a stack trace.
 */
export function refused(message: string): CompositionError {
  if (!reportsUncaught) {
    reportsUncaught = true;
    // A monitor only observes: any other uncaught error still gets Node's own report.
    process.on('uncaughtExceptionMonitor', (error) => {
      if (error instanceof CompositionError) {
        process.stderr.write(`backplane: ${error.message}\n`);
        process.exit(2);
      }
    });
  }
  return new CompositionError(message);
}

/** Refuses a permission, setting, job or audit action a module declares outside its namespace (`ops.` and `auth.` are Backplane's). */
export function checkNamespaces(module: AnyModule): void {
  const namespaces = isBackplaneModule(module) ? [module.name, ...BACKPLANE_NAMESPACES] : [module.name];
  const declared: [DeclaredKind, string][] = [
    ...Object.keys(module.permissions ?? {}).map((name): [DeclaredKind, string] => ['permission', name]),
    ...(module.settings ?? []).map((setting): [DeclaredKind, string] => ['setting', setting.name]),
    ...(module.jobs ?? []).map((job): [DeclaredKind, string] => ['job', job.name]),
    ...Object.keys(module.auditActions ?? {}).map((name): [DeclaredKind, string] => ['audit action', name]),
  ];
  for (const [kind, name] of declared) {
    const reason = refusedName(kind, name, namespaces);
    if (reason !== undefined) {
      throw refused(`${kind} ${JSON.stringify(name)} of module ${module.name} ${reason}`);
    }
  }
}

/**
 * Refuses a route another one already answers (as the router matches: any case, a trailing slash,
 * any parameter names), a permission no module declares and a problem code no status table has.
 */
export function checkRoutes(modules: readonly AnyModule[], permissions: ReadonlyMap<string, string>): void {
  const codes = new Set([...Object.keys(platformStatuses), ...modules.flatMap((module) => Object.keys(module.statuses ?? {}))]);
  const answered = new Map<string, { module: string; route: string }>();
  for (const module of modules) {
    for (const route of module.routes ?? []) {
      const name = `${route.method} ${route.path}`;
      const key = routeKey(route.method, route.path);
      const first = answered.get(key);
      if (first !== undefined) {
        const as = first.route === name ? '' : ` (as ${first.route})`;
        throw refused(
          first.module === module.name
            ? `route ${name} is declared twice by module ${module.name}${as}`
            : `route ${name} is declared by modules ${first.module}${as} and ${module.name}`,
        );
      }
      answered.set(key, { module: module.name, route: name });
      if (route.permission !== undefined && !permissions.has(route.permission)) {
        throw refused(`route ${name} of module ${module.name} checks permission ${route.permission}, which no module declares`);
      }
      const unknown = (route.problems ?? []).find((code) => !codes.has(code));
      if (unknown !== undefined) {
        throw refused(`route ${name} of module ${module.name} lists problem code ${unknown}, which no module's statuses declare`);
      }
    }
  }
}
