/** Every permission the product checks. Names are public API. */
export const PERMISSIONS = [
  'ops.system.read',
  'ops.releases.read',
  'ops.settings.read',
  'ops.settings.write',
  'ops.audit.read',
  'ops.jobs.read',
  'ops.jobs.write',
  'ops.jobs.run',
  'ops.roles.read',
  'ops.roles.write',
  'ops.ratelimits.read',
  'ops.ratelimits.write',
  'ops.accounts.read',
  'ops.accounts.write',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isKnownPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
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
export function effectivePermissions(entries: string[]): Permission[] {
  return PERMISSIONS.filter((permission) => entries.some((entry) => grants(entry, permission)));
}
