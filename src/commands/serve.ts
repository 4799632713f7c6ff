import cluster from 'node:cluster';
import { type Config, loadConfig } from '../app/config.ts';
import { runPrimary } from '../app/cluster.ts';
import { runWorker } from '../app/worker.ts';
import { type Flags, integerFlag } from './args.ts';

export async function serve(flags: Flags): Promise<void> {
  const config: Config = loadConfig();
  const instances = integerFlag(flags, 'instances');
  const port = integerFlag(flags, 'port');
  if (instances !== undefined) {
    config.instances = instances;
  }
  if (port !== undefined) {
    config.port = port;
  }
  if (cluster.isPrimary) {
    await runPrimary(config);
  } else {
    await runWorker(config);
  }
}
