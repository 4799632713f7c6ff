import { definePart } from '../../platform/module.ts';
import { type OpenApiRouteDeps, openApiRoutes } from './routes.ts';


/** The API's own description: /openapi.json and the /docs page, built from every module's routes. */
export const openApiModule = definePart({
  name: 'openapi',
  routes: openApiRoutes,
  statuses: {},
  create(needs: OpenApiRouteDeps) {
    let document: Record<string, unknown> | undefined;
    return { api: {}, routeDeps: { document: () => (document ??= needs.document()) } };
  },
});
