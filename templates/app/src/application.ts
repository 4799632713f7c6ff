import { fileURLToPath } from 'node:url';
import { backplaneModules, defineApplication } from 'backplane';

/** The application: Backplane's modules, then this application's, one line each (a module brings its routes, settings, jobs and migrations). */
export const application = defineApplication({
  name: '{{name}}',
  modules: [
    ...backplaneModules,
    (await import('./modules/notes/index.ts')).notesModule,
  ],
  // Migrations that belong to no module; run with Backplane's and the modules', in one order by version, under one advisory lock.
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
});
