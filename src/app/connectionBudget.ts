import type { Config } from './config.ts';

/** The most connections one instance opens, by pool (ADR 0092). */
export interface ConnectionBudget {
  main: number;
  rateLimit: number;
  listen: number;
  /** Retention purges on the task threads: only an instance that runs jobs starts them. */
  tasks: number;
  perInstance: number;
  /** Of those, the ones that must reach PostgreSQL itself (LISTEN, purges) rather than a transaction pooler. */
  directPerInstance: number;
  /** Every instance of this process (APP_INSTANCES), not counting the primary's short migration connection. */
  perProcess: number;
}

export function connectionBudget(config: Config): ConnectionBudget {
  const main = config.pools.main;
  const rateLimit = config.pools.rateLimit;
  const listen = 1;
  const tasks = config.jobWorkers > 0 ? config.taskThreads * config.pools.taskThread : 0;
  const perInstance = main + rateLimit + listen + tasks;
  return { main, rateLimit, listen, tasks, perInstance, directPerInstance: listen + tasks, perProcess: perInstance * config.instances };
}
