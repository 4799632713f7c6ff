import { z } from 'zod';
import { routeDefiner } from '../../platform/http/route.ts';

/** The document, built once from every module's routes on first use. */
export interface OpenApiRouteDeps {
  document: () => Record<string, unknown>;
}

const defineRoute = routeDefiner<OpenApiRouteDeps>();

/** The document; /docs (the reference page reading it) is a browser page: see src/console/sites.ts. */
export const openApiRoutes = [
  defineRoute({
    method: 'GET',
    path: '/openapi.json',
    needsDatabase: false,
    tag: 'meta',
    summary: 'The OpenAPI 3.1 document of this API',
    responses: { 200: z.record(z.string(), z.unknown()) },
    handler: ({ deps }) => deps.document(),
  }),
];
