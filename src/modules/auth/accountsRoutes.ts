import { z } from 'zod';
import { changedBy } from '../../platform/caller.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import { PageLimit } from '../../platform/http/paging.ts';
import { UNSTORABLE_TEXT_MESSAGE, isStorableText, timestamp } from '../../platform/http/schemas.ts';
import type { AuthRouteDeps } from './routeDeps.ts';

const Account = z.object({
  id: z.string(),
  email: z.string(),
  roles: z.array(z.string()),
  locked: z.boolean(),
  locked_at: timestamp().nullable(),
  created_at: timestamp(),
});

const AccountParams = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be an account id')
    .meta({ examples: ['0b5e7c1a-6d2f-4c8e-9a51-3f0d2b7c9e14'] }),
});
const RoleName = z.string().regex(/^[a-z][a-z0-9_]{0,99}$/, 'must be a role name');
const RoleParams = AccountParams.extend({ role: RoleName.meta({ examples: ['ops_viewer'] }) });
const Reason = z.strictObject({ reason: z.string().trim().min(1, 'a reason is required').max(500) });

const ListQuery = z.strictObject({
  email: z.string().max(254).refine(isStorableText, UNSTORABLE_TEXT_MESSAGE).optional().describe('Part of the address, any case'),
  role: RoleName.optional().describe('Only accounts holding this role'),
  locked: z.enum(['true', 'false']).optional(),
  limit: PageLimit(200),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,700}$/, 'must be a cursor returned by a previous page')
    .refine((cursor) => isStorableText(Buffer.from(cursor, 'base64url').toString()), 'must be a cursor returned by a previous page')
    .optional(),
});

const defineRoute = routeDefiner<AuthRouteDeps>();

/** Accounts for the operator's console: list, lock and unlock, grant and revoke roles (ADR 0128). */
export const accountsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/accounts',
    permission: 'ops.accounts.read',
    tag: 'ops',
    summary: 'Accounts by address, with their roles and whether locked, in keyset pages',
    description: 'Pages with `cursor` (the `next_cursor` of the previous page). Bounded by 5 s (503 `accounts_query_timeout`).',
    query: ListQuery,
    responses: { 200: z.object({ accounts: z.array(Account), next_cursor: z.string().optional() }) },
    problems: ['accounts_query_timeout'],
    handler: ({ query, deps }) =>
      deps.accounts.list({
        email: query.email,
        role: query.role,
        locked: query.locked === undefined ? undefined : query.locked === 'true',
        after: query.cursor === undefined ? undefined : Buffer.from(query.cursor, 'base64url').toString(),
        limit: query.limit,
      }),
  }),
  ...(['lock', 'unlock'] as const).map((action) =>
    defineRoute({
      method: 'POST',
      path: `/ops/accounts/{id}/${action}`,
      permission: 'ops.accounts.write',
      tag: 'ops',
      summary: action === 'lock' ? 'Lock an account with a reason: its tokens and sessions stop working on every instance' : 'Unlock an account with a reason',
      description: `The same operation as \`backplane accounts ${action}\`; audited as \`auth.account.${action}ed\`. Doing it twice changes nothing more.`,
      params: AccountParams,
      body: Reason,
      responses: { 200: Account },
      problems: ['account_not_found'],
      handler: ({ params, body, caller, deps }) => deps.accounts.setLocked(params.id, action === 'lock', body.reason, changedBy(caller)),
    }),
  ),
  defineRoute({
    method: 'PUT',
    path: '/ops/accounts/{id}/roles/{role}',
    permission: 'ops.roles.write',
    tag: 'ops',
    summary: 'Grant a role to an account, with a reason',
    description: 'Only a role whose every permission the caller holds (403 `permission_not_held`, audited). Audited as `auth.role.granted`.',
    params: RoleParams,
    body: Reason,
    responses: { 200: Account },
    problems: ['account_not_found', 'role_not_found', 'permission_not_held'],
    handler: ({ params, body, caller, deps }) => deps.accounts.grant(params.id, params.role, body.reason, changedBy(caller)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/ops/accounts/{id}/roles/{role}',
    permission: 'ops.roles.write',
    tag: 'ops',
    summary: 'Take a role from an account, with a reason',
    description:
      'Only a role whose every permission the caller holds (403 `permission_not_held`, audited). Audited as `auth.role.revoked`; a role the account does not hold changes nothing.',
    params: RoleParams,
    body: Reason,
    responses: { 200: Account },
    problems: ['account_not_found', 'role_not_found', 'permission_not_held'],
    handler: ({ params, body, caller, deps }) => deps.accounts.revoke(params.id, params.role, body.reason, changedBy(caller)),
  }),
];
