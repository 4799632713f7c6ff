import { operatorOptions } from './nodeOptions.ts';

/** Node 22's switch to the AsyncLocalStorage Node 24 ships by default (AsyncContextFrame). */
export const CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';

/**
 * The flag the primary adds to the instances it forks, if any. Every request runs inside the
 * deadline's AsyncLocalStorage (platform/db/deadline.ts); on Node 20 and 22 that store is kept by
 * promise hooks, which cost every promise of every request, and on Node 22 the flag replaces them
 * with the frame Node 24 uses: the HTTP stack on one core read 0.75x bare Koa with it and 0.66x
 * without (bench/README.md, 2026-11-27). Only where Node accepts the flag (22: Node 20 has no such
 * option and 24 has the frame on already), and never against the operator's own choice: any
 * `async-context-frame` option in the primary's options or NODE_OPTIONS (such as
 * `--no-experimental-async-context-frame`) leaves the instances as started.
 */
export function contextFrameFlag(options: {
  allowedFlags: ReadonlySet<string>;
  execArgv: readonly string[];
  nodeOptions: string | undefined;
}): string | undefined {
  if (!options.allowedFlags.has(CONTEXT_FRAME_FLAG)) {
    return undefined;
  }
  const chosen = operatorOptions(options.execArgv, options.nodeOptions).some((flag) => flag.includes('async-context-frame'));
  return chosen ? undefined : CONTEXT_FRAME_FLAG;
}
