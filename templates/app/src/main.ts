import { runCli } from 'backplane';
import { application } from './application.ts';

// `serve` starts the cluster (each instance runs this file again); every other word is one of Backplane's commands or a module's.
runCli(application);
