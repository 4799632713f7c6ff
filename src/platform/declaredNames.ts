/**
 * The rules for the names a module declares (ADR 0120, amended for issue 46). Permission, setting
 * and audit action names are lowercase words (a letter, then letters, digits or _) joined by dots,
 * at least two words: `notes.read`, `auth.sign_in.succeeded`. The first word is the namespace.
 */
export const DOTTED_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** The rule as said in a refusal. */
export const DOTTED_NAME_RULE = 'lowercase words of letters, digits and _ joined by dots, like notes.read';

/** Namespaces of Backplane's own names (public API) beside its modules' names: no application module may use them. */
export const BACKPLANE_NAMESPACES: readonly string[] = ['ops', 'auth'];

export const isPermissionName = (name: string): boolean => DOTTED_NAME.test(name);

export type DeclaredKind = 'permission' | 'setting' | 'audit action' | 'job';

/**
 * Why a declared name is refused, or undefined when it is the module's: dotted names start with
 * `<namespace>.`, job names (lowercase words joined by _) with `<namespace>_`.
 */
export function refusedName(kind: DeclaredKind, name: string, namespaces: readonly string[]): string | undefined {
  const separator = kind === 'job' ? '_' : '.';
  if (kind !== 'job' && !DOTTED_NAME.test(name)) {
    return `is not ${DOTTED_NAME_RULE}`;
  }
  if (namespaces.some((namespace) => name.startsWith(`${namespace}${separator}`))) {
    return undefined;
  }
  const reserved = BACKPLANE_NAMESPACES.find((namespace) => name.startsWith(`${namespace}${separator}`));
  const allowed = namespaces.map((namespace) => `${namespace}${separator}`).join(' or ');
  return reserved ? `is in Backplane's namespace ${reserved}${separator}: name it ${allowed}…` : `is not namespaced by its module: name it ${allowed}…`;
}

/** A route as the router matches it: any case, with or without a trailing slash, whatever its parameters are called. */
export const routeKey = (method: string, path: string): string =>
  `${method.toUpperCase()} ${
    path
      .toLowerCase()
      .replace(/\{[^}]*\}/g, '{}')
      .replace(/\/+$/, '') || '/'
  }`;
