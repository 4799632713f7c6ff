import { setTimeout as delay } from 'node:timers/promises';
import { type JobDefinition, defineJob } from '../../platform/jobs.ts';
import { AppError } from '../../platform/errors.ts';

// Yearly, so these run only when a test asks for a run.
const ON_REQUEST = '0 0 1 1 *';

/** Jobs that exist only to exercise the job system; added when APP_TEST_JOBS=1, refused in production. */
export function testJobDefinitions(): JobDefinition[] {
  return [
    defineJob({
      name: 'test_tick',
      description: 'Test only: runs every second and reads the database clock',
      schedule: '@every 1s',
      timeoutSeconds: 10,
      maxAttempts: 1,
      handler: async (context) => void (await context.db.query('select now()')),
    }),
    defineJob({
      name: 'test_hold',
      description: 'Test only: holds its run for 4 s, or until its signal stops it',
      schedule: ON_REQUEST,
      timeoutSeconds: 60,
      maxAttempts: 3,
      handler: (context) => delay(4_000, undefined, { signal: context.signal }),
    }),
    defineJob({
      name: 'test_fail',
      description: 'Test only: every attempt fails',
      schedule: ON_REQUEST,
      timeoutSeconds: 10,
      maxAttempts: 2,
      handler: async () => {
        throw new AppError('test_job_failed', 'the test job fails on purpose');
      },
    }),
    defineJob({
      name: 'test_timeout',
      description: 'Test only: outlasts its 1 s timeout',
      schedule: ON_REQUEST,
      timeoutSeconds: 1,
      maxAttempts: 1,
      handler: (context) => delay(30_000, undefined, { signal: context.signal }),
    }),
  ];
}
