export { trackInstance, type InstanceTracker } from './heartbeat.ts';
export { releasesRoutes } from './routes.ts';
export type { InstanceRecord } from './store.ts';
export { selectInstances } from './store.ts';
export { purgeReleaseInstances } from './purge.ts';
