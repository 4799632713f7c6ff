/**
 * Every permission the application checks, with what it allows: declared by each module in its own
 * folder and collected when the application is composed (ADR 0120). Names are public API. One
 * process runs one application; a second composition (a test's) only adds names.
 */
const declared = new Map<string, string>();

/** Called by the composition root with the permissions its modules declare. */
export function declarePermissions(permissions: Iterable<readonly [string, string]>): void {
  for (const [name, description] of permissions) {
    declared.set(name, description);
  }
}

/** The declared permissions, sorted. */
export const knownPermissions = (): string[] => [...declared.keys()].sort();

export function isKnownPermission(value: string): boolean {
  return declared.has(value);
}

/**
 * What the built-in roles grant, decided here rather than in their rows (ADR 0013, amended), so a
 * module an application adds needs no migration of its own: platform_admin holds every permission
 * of every composed module; ops_viewer only Backplane's ops reads (an application's reads show its
 * data, which watching operations does not need).
 */
const BUILTIN_ROLES: Readonly<Record<string, { entries: readonly string[]; description: string }>> = {
  platform_admin: { entries: ['*'], description: 'Every permission of every module' },
  ops_viewer: { entries: ['ops.*.read'], description: 'Every ops read permission' },
};

/** A role's entries and description as they apply: a built-in role's from the code, a custom role's as stored. */
export function roleGrants(role: { name: string; builtin: boolean; permissions: string[]; description: string }): {
  permissions: string[];
  description: string;
} {
  const builtin = role.builtin ? BUILTIN_ROLES[role.name] : undefined;
  return builtin ? { permissions: [...builtin.entries], description: builtin.description } : { permissions: role.permissions, description: role.description };
}

/**
 * A role's entry grants a permission when equal to it, or as one of the built-in roles' patterns:
 * `*` (every permission), `ops.*` (every ops permission) and `ops.*.read` (every ops read permission).
 */
export function grants(entry: string, permission: string): boolean {
  if (entry === permission || entry === '*') {
    return true;
  }
  if (entry === 'ops.*') {
    return permission.startsWith('ops.');
  }
  if (entry === 'ops.*.read') {
    return /^ops\.[a-z_]+\.read$/.test(permission);
  }
  return false;
}

/** The known permissions that role entries grant, patterns expanded: what holding them lets one do. */
export function effectivePermissions(entries: string[]): string[] {
  return knownPermissions().filter((permission) => entries.some((entry) => grants(entry, permission)));
}
