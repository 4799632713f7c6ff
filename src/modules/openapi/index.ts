import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { openApiRoutes } from './routes.ts';

/** The API's own description: /openapi.json and the /docs page, built from every module's routes. */
export const openApiModule = defineModule({
  name: 'openapi',
  routes: openApiRoutes,
  statuses: {},
  create(context: BackplaneContext) {
    let document: Record<string, unknown> | undefined;
    return { api: {}, routeDeps: { document: () => (document ??= context.collected.document()) } };
  },
});
