import { fileURLToPath } from 'node:url';
import { backplaneModules, defineApplication } from 'backplane';
import { notesModule } from './modules/notes/index.ts';

/** The application: Backplane's modules, then this application's, one line each. */
export const application = defineApplication({
  name: '{{name}}',
  modules: [
    ...backplaneModules,
    notesModule,
  ],
  // Run with Backplane's migrations, in one order by version, under one advisory lock.
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
});
