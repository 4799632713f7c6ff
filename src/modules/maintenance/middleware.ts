import type { Context, Next } from 'koa';
import { AppError, type StatusTable } from '../../platform/errors.ts';

export const maintenanceStatuses = { maintenance: 503 } as const satisfies StatusTable;

export const DEFAULT_MAINTENANCE_MESSAGE = 'The service is down for maintenance; try again later.';

/** What maintenance mode needs of the settings, read from memory on every request. */
export interface MaintenanceSettings {
  enabled(): boolean;
  message(): string;
  retryAfterSeconds(): number;
}

// Served during maintenance so probes keep instances in rotation and operators can sign in and end it.
const OPEN_PATHS = new Set(['/livez', '/readyz', '/openapi.json', '/docs']);
const OPEN_PREFIXES = ['/.well-known/', '/ops/'];
// GET /auth/me: the console learns from it what the operator may do, so it can end maintenance.
// POST /auth/sign-out: a session must end whenever its owner asks, or a refused sign-out leaves it alive.
const OPEN_SIGN_IN = new Set(['POST /auth/sign-in', 'POST /auth/sign-in/mfa', 'POST /auth/token', 'POST /auth/sign-out', 'GET /auth/me']);

/** Compared as the router matches: case-insensitive, one trailing slash ignored. */
export function isOpenDuringMaintenance(method: string, path: string): boolean {
  const normalized = path.length > 1 ? path.toLowerCase().replace(/\/$/, '') : path;
  return (
    OPEN_PATHS.has(normalized) || OPEN_PREFIXES.some((prefix) => normalized.startsWith(prefix)) || OPEN_SIGN_IN.has(`${method.toUpperCase()} ${normalized}`)
  );
}

/** While maintenance.enabled is on, every other route answers 503 `maintenance` with Retry-After. */
export function maintenanceMode(settings: MaintenanceSettings) {
  // Not async: outside maintenance a request passes through without a promise of its own.
  return function refuseDuringMaintenance(ctx: Context, next: Next): Promise<void> {
    if (settings.enabled() && !isOpenDuringMaintenance(ctx.method, ctx.path)) {
      throw new AppError('maintenance', settings.message() || DEFAULT_MAINTENANCE_MESSAGE, {
        headers: { 'Retry-After': String(Math.max(1, Math.floor(settings.retryAfterSeconds()))) },
      });
    }
    return next();
  };
}
