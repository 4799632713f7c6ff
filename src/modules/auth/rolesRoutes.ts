import type { AuthRouteDeps } from './routeDeps.ts';
import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';
import { changedBy } from '../../platform/caller.ts';
import { reply, routeDefiner } from '../../platform/http/route.ts';
import type { Role } from './store/roles.ts';

const RoleBody = z.object({
  name: z.string(),
  permissions: z.array(z.string()),
  builtin: z.boolean(),
  description: z.string(),
  version: z.number().int(),
  updated_at: timestamp(),
});

const roleBody = (role: Role): z.infer<typeof RoleBody> => ({
  name: role.name,
  permissions: role.permissions,
  builtin: role.builtin,
  description: role.description,
  version: role.version,
  updated_at: role.updatedAt.toISOString(),
});

const PutRoleBody = z.object({
  permissions: z.array(z.string().max(100)).max(100),
  reason: z.string().trim().min(1, 'a reason is required').max(500),
  version: z.number().int().min(0).optional().describe('The version last read (0: the role must not exist yet); another is 409'),
});

const defineRoute = routeDefiner<AuthRouteDeps>();

export const rolesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/roles',
    permission: 'ops.roles.read',
    tag: 'ops',
    summary: 'Roles and their permissions',
    responses: { 200: z.object({ roles: z.array(RoleBody) }) },
    handler: async ({ deps }) => ({ roles: (await deps.roles.list()).map(roleBody) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/ops/roles/{name}',
    permission: 'ops.roles.write',
    tag: 'ops',
    summary: 'Create a custom role or replace its permissions (audited)',
    description:
      'Built-in roles cannot be changed. The same permissions change nothing. Only permissions the caller holds can be added or removed (403 permission_not_held, audited). Applies to every instance at once.',
    params: z.object({
      name: z
        .string()
        .max(100)
        .meta({ examples: ['support'] }),
    }),
    body: PutRoleBody,
    status: 200,
    responses: { 200: RoleBody, 201: RoleBody },
    problems: ['invalid_role_name', 'unknown_permission', 'role_builtin', 'role_version_conflict', 'permission_not_held'],
    handler: async ({ params, body, caller, deps }) => {
      const { role, created } = await deps.roles.put(
        { name: params.name, permissions: body.permissions, reason: body.reason, version: body.version },
        changedBy(caller),
      );
      return reply(roleBody(role), { status: created ? 201 : 200 });
    },
  }),
];
