#!/usr/bin/env node
import { runApplicationCli } from './commands/applicationCli.ts';

const argv = process.argv.slice(2);
// Inside an application its command line (Backplane composed with its modules); elsewhere Backplane's
// modules alone, each command loading only the code it runs.
if (!runApplicationCli(process.cwd(), argv)) {
  (await import('./commands/main.ts')).runCli(undefined, argv);
}
