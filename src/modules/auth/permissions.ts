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
 * A role's entry grants a permission when equal to it, or as one of the built-in patterns:
 * `ops.*` (every ops permission) and `ops.*.read` (every ops read permission).
 */
export function grants(entry: string, permission: string): boolean {
  if (entry === permission) {
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
