import type { Registry } from '../../platform/metrics/registry.ts';
import { definePart } from '../../platform/module.ts';
import { maintenanceSettings } from './settings.ts';
import { registerMaintenanceMetrics } from './metrics.ts';
import { type MaintenanceSettings, maintenanceMode, maintenanceStatuses } from './middleware.ts';

export { maintenanceMode, maintenanceStatuses, isOpenDuringMaintenance, DEFAULT_MAINTENANCE_MESSAGE, type MaintenanceSettings } from './middleware.ts';
export { registerMaintenanceMetrics } from './metrics.ts';

export { maintenanceSettings } from './settings.ts';

/** Maintenance mode: every instance answers 503 maintenance, except the routes that must stay open. */
export const maintenanceModule = definePart({
  name: 'maintenance',
  settings: maintenanceSettings,
  routes: [],
  statuses: maintenanceStatuses,
  create(needs: { settings: MaintenanceSettings; registry: Registry }) {
    registerMaintenanceMetrics(needs.registry, needs.settings.enabled);
    return {
      api: {
        enabled: needs.settings.enabled,
        /** Answers before limits are spent and before a body is read. */
        middleware: maintenanceMode(needs.settings),
      },
      routeDeps: undefined,
    };
  },
});
