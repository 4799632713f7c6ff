import type { Config } from '../app/config.ts';

const printed = new Set<string>();

/** The configuration's warnings on stderr, one line each and once a process however often it is loaded. */
export function printConfigWarnings(config: Config): void {
  for (const warning of config.warnings) {
    if (!printed.has(warning)) {
      printed.add(warning);
      console.error(`backplane: warning: ${warning}`);
    }
  }
}
