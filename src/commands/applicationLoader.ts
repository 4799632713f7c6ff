// `node --import <the application's tsx> applicationLoader ROOT ENTRY …ARGV`: the application's
// command line with its TypeScript loaded, and a failure to load it told in one line.
import { loadApplication } from './applicationCli.ts';

const [root, entry, ...argv] = process.argv.slice(2);
await loadApplication(root!, entry!, argv);
