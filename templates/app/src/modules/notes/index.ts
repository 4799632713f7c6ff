import { defineJob, defineModule } from 'backplane';
import { notesRetention } from './retention.ts';
import { notesRoutes, notesStatuses } from './routes.ts';
import { notesSettings } from './settings.ts';
import { countNotes } from './store.ts';

/**
 * The example module: every extension point a real module uses, declared in its own folder. No type
 * arguments: the compiler then checks each route's permission against its declarations, and
 * `moduleRouteDefiner` (routes.ts) checks each problem code against `notesStatuses`.
 */
export const notesModule = defineModule({
  name: 'notes',
  needs: ['audit', 'settings'],
  permissions: {
    'notes.read': 'Read notes',
    'notes.write': 'Write notes',
  },
  routes: notesRoutes,
  statuses: notesStatuses,
  settings: notesSettings,
  auditActions: { 'notes.note.created': 'A note was written' },
  retention: [notesRetention],
  // Its table's migrations, in its folder (copied to dist/ by the build).
  migrations: new URL('./migrations', import.meta.url),
  jobs: [
    defineJob({
      name: 'notes_census',
      description: 'Logs how many notes there are and the oldest one',
      schedule: '@daily',
      minIntervalSeconds: 3600,
      timeoutSeconds: 60,
      maxAttempts: 3,
      async handler({ db, logger }) {
        const { count, oldest } = await countNotes(db);
        logger.info({ count, oldest }, 'notes census');
      },
    }),
  ],
  create(context) {
    return {
      api: undefined,
      routeDeps: {
        database: context.pool,
        // Both need their module in `needs`; the settings reader is typed by the notes' declarations where it is kept (service.ts).
        recordAudit: context.recordAudit,
        settings: context.settings,
        runTask: context.runTask,
      },
    };
  },
});
