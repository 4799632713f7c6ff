#!/usr/bin/env node
import { runCli } from './commands/main.ts';

// Backplane's modules alone; each command loads only the code it runs (the application is composed on first use).
runCli(undefined, process.argv.slice(2));
