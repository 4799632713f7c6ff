// The bench's reference servers run as BENCH_WORKERS clustered workers, as the service's instances do.
import cluster from 'node:cluster';

/** In the primary: forks the workers and stops them on SIGTERM; in a worker: runs `serve`. */
export async function runClustered(serve: () => void | Promise<void>): Promise<void> {
  if (!cluster.isPrimary) {
    await serve();
    return;
  }
  const workers = Number(process.env.BENCH_WORKERS ?? '4');
  for (let index = 0; index < workers; index += 1) {
    cluster.fork();
  }
  process.on('SIGTERM', () => {
    Object.values(cluster.workers ?? {}).forEach((worker) => worker?.kill());
    process.exit(0);
  });
}
