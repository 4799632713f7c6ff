// The command line of an application with one module of its own, whose migrations are the folder
// BACKPLANE_TEST_MODULE_MIGRATIONS names: a migration that fails or hangs, for the tests of what a
// failed or interrupted start leaves behind.
import { backplaneModules, defineApplication, defineModule, runCli } from '../../src/index.ts';

const fixture = defineModule({ name: 'fixture', migrations: process.env.BACKPLANE_TEST_MODULE_MIGRATIONS });
runCli(defineApplication({ name: 'fixture-app', modules: [...backplaneModules, fixture] }));
