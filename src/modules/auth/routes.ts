import type { AuthRouteDeps } from './routeDeps.ts';
import { z } from 'zod';
import { reply, routeDefiner } from '../../platform/http/route.ts';

const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });

const defineRoute = routeDefiner<AuthRouteDeps>();

export const authRoutes = [
  defineRoute({
    method: 'GET',
    path: '/.well-known/jwks.json',
    needsDatabase: false,
    tag: 'auth',
    summary: 'Public keys that verify access tokens',
    responses: { 200: Jwks },
    handler: ({ deps }) => reply({ keys: deps.keys.publicJwks() }, { headers: { 'Cache-Control': 'public, max-age=300' } }),
  }),
];
