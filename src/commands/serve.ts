import cluster from 'node:cluster';
import { currentApplication } from '../app/application.ts';
import { type Config, loadConfig } from '../app/config.ts';
import { databaseFailure } from '../app/databaseFailure.ts';
import { type Flags, integerFlag } from './args.ts';
import { printConfigWarnings } from './configWarnings.ts';

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
    // Said once, by the primary: each instance reads the same files again.
    printConfigWarnings(config);
    // Its first statement reaches the database: a refused or unreachable server is one line, exit 2.
    await (await import('../app/cluster.ts')).runPrimary(config).catch((error: unknown) => {
      throw databaseFailure(error, config);
    });
  } else {
    // Answered while the instance's code still loads: loading is slow, not stuck.
    (await import('../app/liveness.ts')).answerLivenessPings();
    await (await import('../app/worker.ts')).runWorker(await currentApplication(), config);
  }
}
