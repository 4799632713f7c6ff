import cluster from 'node:cluster';
import { currentApplication } from '../app/application.ts';
import { type Config, loadConfig } from '../app/config.ts';
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
  // Each side loads only its own code: instances never load the embedded database manager.
  if (cluster.isPrimary) {
    await (await import('../app/cluster.ts')).runPrimary(config);
  } else {
    // Answered while the instance's code still loads: loading is slow, not stuck.
    (await import('../app/liveness.ts')).answerLivenessPings();
    await (await import('../app/worker.ts')).runWorker(await currentApplication(), config);
  }
}
