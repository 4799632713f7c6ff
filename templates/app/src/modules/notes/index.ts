import { type RecordAudit, defineJob, defineModule } from 'backplane';
import type pg from 'pg';
import { notesRetention } from './retention.ts';
import { notesRoutes, notesStatuses } from './routes.ts';
import { countNotes } from './store.ts';

interface SettingsReader {
  integer(name: string): number;
}

/**
 * The example module: every extension point a real module uses, declared in its own folder. No type
 * arguments: the compiler then checks each route's permission and problem codes against its declarations.
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
  settings: [
    { name: 'notes.page_size', group: 'notes', description: 'Notes GET /notes answers at a time', kind: 'integer', default: 50, min: 1, max: 500 },
    { name: 'notes.retention', group: 'notes', description: 'Notes older than this are deleted by the retention job', kind: 'duration', default: 365 * 86_400, min: 86_400, max: 3650 * 86_400, reasonRequired: true },
  ],
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
        pool: context.pool as pg.Pool,
        recordAudit: context.use<{ recordAudit: RecordAudit }>('audit').recordAudit,
        pageSize: () => context.use<{ reader: SettingsReader }>('settings').reader.integer('notes.page_size'),
        runTask: context.runTask,
      },
    };
  },
});
