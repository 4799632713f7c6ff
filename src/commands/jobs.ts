import { changeDefinition, listDefinitions, requestRun } from '../modules/jobs/index.ts';
import { type Flags, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';
import { cliChange, withServices } from './services.ts';

/** `jobs list` · `jobs run NAME` · `jobs enable|disable NAME --reason R`: as /ops/jobs. */
export async function jobs(flags: Flags): Promise<number> {
  const [action, name] = flags.positional;
  const json = hasFlag(flags, 'json');
  const reason = flag(flags, 'reason');
  await withDatabase(
    (pool, { url, config }) =>
      withServices(pool, url, config, async ({ jobs: service }) => {
        if (action === 'list') {
          const { definitions } = await listDefinitions(service);
          if (json) {
            printJson({ definitions });
          } else {
            printTable(
              ['NAME', 'ENABLED', 'SCHEDULE', 'NEXT RUN', 'QUEUE', 'MODIFIED'],
              definitions.map((job) => [job.name, job.enabled ? 'yes' : 'no', job.schedule, job.next_run_at, job.queue, job.modified ? 'yes' : 'no']),
            );
          }
          return;
        }
        const by = cliChange();
        if (action === 'run') {
          const run = await requestRun(service, name!, { accountId: null, requestId: by.requestId });
          if (json) {
            printJson(run);
          } else {
            console.log(`queued run ${run.id} of ${name!}`);
          }
          return;
        }
        const definition = await changeDefinition(service, name!, { enabled: action === 'enable', reason }, by);
        if (json) {
          printJson(definition);
        } else {
          console.log(
            `${definition.name} ${definition.enabled ? 'enabled' : 'disabled'} (version ${definition.version}); every instance follows within a second`,
          );
        }
      }),
    { schema: 'current' },
  );
  return 0;
}
