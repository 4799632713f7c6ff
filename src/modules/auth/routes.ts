import { z } from 'zod';
import { defineRoute } from '../../platform/http/route.ts';
import type { SigningKey } from './signingKeys.ts';

const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });

export function authRoutes(deps: { signingKey: SigningKey }) {
  return [
    defineRoute({
      method: 'GET',
      path: '/.well-known/jwks.json',
      needsDatabase: false,
      tag: 'auth',
      summary: 'Public keys that verify access tokens',
      responses: { 200: Jwks },
      handler: ({ request }) => {
        request.setHeader('Cache-Control', 'public, max-age=300');
        return { keys: [deps.signingKey.publicJwk] };
      },
    }),
  ];
}
