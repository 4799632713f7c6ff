import type { Config } from './config.ts';

/** The most connections one instance opens, by pool, and what its pod's primary adds (ADR 0092). */
export interface ConnectionBudget {
  main: number;
  /** The instance's own decision pool: none when the pod's primary decides (APP_RATELIMIT_BATCHING=pod). */
  rateLimit: number;
  listen: number;
  /** Retention purges on the task threads: only an instance that runs jobs starts them. */
  tasks: number;
  perInstance: number;
  /** Of those, the ones that must reach PostgreSQL itself (LISTEN, purges) rather than a transaction pooler. */
  directPerInstance: number;
  /** The primary's decision pool, shared by the pod's instances (APP_RATELIMIT_BATCHING=pod; else 0). */
  perPod: number;
  /** Every instance of this process (APP_INSTANCES) and the primary's pool, not counting its short migration connection. */
  perProcess: number;
}

export function connectionBudget(config: Config): ConnectionBudget {
  const main = config.pools.main;
  const pod = config.rateLimitBatching === 'pod';
  const rateLimit = pod ? 0 : config.pools.rateLimit;
  const perPod = pod ? config.pools.rateLimit : 0;
  const listen = 1;
  const tasks = config.jobWorkers > 0 ? config.taskThreads * config.pools.taskThread : 0;
  const perInstance = main + rateLimit + listen + tasks;
  return { main, rateLimit, listen, tasks, perInstance, directPerInstance: listen + tasks, perPod, perProcess: perInstance * config.instances + perPod };
}
