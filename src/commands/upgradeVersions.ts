import semver from 'semver';

/**
 * v0.5, 0.5 and 0.5.0 are one release (the seed names releases v<major>.<minor>); anything else,
 * including what semver refuses (0.6.0-a..b, 01.5), is not a release name.
 */
export function normalizeVersion(text: string): string | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?(-[0-9A-Za-z.-]+)?$/.exec(text.trim());
  return (match && semver.valid(`${match[1]}.${match[2]}.${match[3] ?? '0'}${match[4] ?? ''}`)) || undefined;
}

/** semver's order: a pre-release comes before its release, and 0.6.0-beta.10 after 0.6.0-beta.9. */
export function compareVersions(a: string, b: string): number {
  return semver.compare(a, b);
}
