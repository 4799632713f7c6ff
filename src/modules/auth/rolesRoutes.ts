import { z } from 'zod';
import { defineRoute, requestOrigin } from '../../platform/http/route.ts';
import type { RoleChanges } from './roleChanges.ts';
import type { Role } from './store/roles.ts';

const RoleBody = z.object({
  name: z.string(),
  permissions: z.array(z.string()),
  builtin: z.boolean(),
  description: z.string(),
  version: z.number().int(),
  updated_at: z.string(),
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

export function rolesRoutes(deps: { roles: RoleChanges }) {
  return [
    defineRoute({
      method: 'GET',
      path: '/ops/roles',
      permission: 'ops.roles.read',
      tag: 'ops',
      summary: 'Roles and their permissions',
      responses: { 200: z.object({ roles: z.array(RoleBody) }) },
      handler: async () => ({ roles: (await deps.roles.list()).map(roleBody) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/ops/roles/{name}',
      permission: 'ops.roles.write',
      tag: 'ops',
      summary: 'Create a custom role or replace its permissions (audited)',
      description: 'Built-in roles cannot be changed. The same permissions change nothing. Applies to every instance at once.',
      params: z.object({ name: z.string().max(100) }),
      body: PutRoleBody,
      status: 200,
      responses: { 200: RoleBody, 201: RoleBody },
      problems: ['invalid_role_name', 'unknown_permission', 'role_builtin', 'role_version_conflict'],
      handler: async ({ params, body, request }) => {
        const { role, created } = await deps.roles.put(
          { name: params.name, permissions: body.permissions, reason: body.reason, version: body.version },
          {
            actor: { kind: request.actor!.kind, id: request.actor!.id, label: request.actor!.label },
            ...requestOrigin(request),
          },
        );
        request.setStatus(created ? 201 : 200);
        return roleBody(role);
      },
    }),
  ];
}
