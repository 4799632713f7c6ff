export { maintenanceMode, maintenanceStatuses, isOpenDuringMaintenance, DEFAULT_MAINTENANCE_MESSAGE, type MaintenanceSettings } from './middleware.ts';
export { registerMaintenanceMetrics } from './metrics.ts';
