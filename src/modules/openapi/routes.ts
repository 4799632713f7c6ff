import { z } from 'zod';
import { defineRoute } from '../../platform/http/route.ts';

/** The document; /docs (the reference page reading it) is a browser page: see src/console/sites.ts. */
export function openApiRoutes(document: () => Record<string, unknown>) {
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      needsDatabase: false,
      tag: 'meta',
      summary: 'The OpenAPI 3.1 document of this API',
      responses: { 200: z.record(z.string(), z.unknown()) },
      handler: () => document(),
    }),
  ];
}
