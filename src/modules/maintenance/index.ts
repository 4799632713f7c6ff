import { defineModule } from '../../platform/module.ts';
import { rateLimitModule } from '../ratelimit/index.ts';
import { type SettingsReader, settingsModule } from '../settings/index.ts';
import { maintenanceSettings } from './settings.ts';
import { registerMaintenanceMetrics } from './metrics.ts';
import { type MaintenanceSettings, maintenanceMode, maintenanceStatuses } from './middleware.ts';

export { maintenanceMode, maintenanceStatuses, isOpenDuringMaintenance, DEFAULT_MAINTENANCE_MESSAGE, type MaintenanceSettings } from './middleware.ts';
export { registerMaintenanceMetrics } from './metrics.ts';

export { maintenanceSettings } from './settings.ts';

/** Maintenance mode: every instance answers 503 maintenance, except the routes that must stay open. */
export const maintenanceModule = defineModule({
  name: 'maintenance',
  needs: ['settings', 'ratelimit'],
  settings: maintenanceSettings,
  routes: [],
  statuses: maintenanceStatuses,
  create(context) {
    const reader: SettingsReader<(typeof maintenanceSettings)[number]> = context.use(settingsModule).reader;
    const settings: MaintenanceSettings = {
      enabled: () => reader.boolean('maintenance.enabled'),
      message: () => reader.string('maintenance.message'),
      retryAfterSeconds: () => reader.duration('maintenance.retry_after'),
    };
    registerMaintenanceMetrics(context.registry, settings.enabled);
    const middleware = maintenanceMode(settings);
    return {
      api: { enabled: settings.enabled, middleware },
      routeDeps: undefined,
      // Maintenance answers before limits are spent and before a body is read; then the per-address limit on /auth.
      middleware: { beforeBody: [middleware, context.use(rateLimitModule).perAddress] },
    };
  },
});
