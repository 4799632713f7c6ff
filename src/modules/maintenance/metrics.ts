import client from 'prom-client';

/** 1 while maintenance mode is on, as this instance's settings cache holds it; read at each scrape. */
export function registerMaintenanceMetrics(registry: client.Registry, enabled: () => boolean): void {
  new client.Gauge({
    name: 'backplane_maintenance_enabled',
    help: 'Whether maintenance mode is on (1) or off (0), as this instance sees the setting',
    registers: [registry],
    collect() {
      this.set(enabled() ? 1 : 0);
    },
  });
}
