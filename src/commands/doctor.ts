import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { loadConfig } from '../app/config.ts';
import { packageRoot } from '../platform/packageRoot.ts';
import { findApplication } from './applicationFolder.ts';
import { type Flags, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { type Check, type CheckResult, DATABASE_CHECKS, type DoctorContext, LOCAL_CHECKS, configurationCheck, runCheck } from './doctorChecks.ts';
import { printJson, printTable } from './output.ts';
import { withServices } from './services.ts';

const FETCH_TIMEOUT_MS = 3_000;

async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'manual' });
  return { status: response.status, text: await response.text() };
}

/** `doctor [--json] [--api-dir DIR]`: one line per check, ok/warn/fail/skip with what to do; exit 1 on any fail. */
export async function doctor(flags: Flags): Promise<number> {
  const report = await runDoctor(flags);
  if (hasFlag(flags, 'json')) {
    printJson(report);
  } else {
    printTable(
      ['STATUS', 'CHECK', 'FINDING'],
      report.checks.map((result) => [result.status, result.check, result.message]),
    );
  }
  return report.ok ? 0 : 1;
}

/** The checks that did not run, listed as such rather than left out or called ok. */
function skipped(checks: Check[], message: string): CheckResult[] {
  return checks.map((check) => ({ check: check.name, status: 'skip', message }));
}

/**
 * The API files doctor compares with the routes: --api-dir; in an application its own api/ (none
 * is a skip); elsewhere Backplane's, unless it is an installed package: files in node_modules are
 * nobody's to regenerate.
 */
function apiFilesOf(flags: Flags): DoctorContext['apiFiles'] {
  const given = flag(flags, 'api-dir');
  if (given !== undefined) {
    return { dir: resolve(given) };
  }
  const application = findApplication(process.cwd());
  if (application) {
    const dir = join(application.root, 'api');
    return existsSync(dir)
      ? { dir }
      : { skipped: `not checked: the application in ${application.root} keeps no generated API files (api/); backplane openapi writes them` };
  }
  if (packageRoot.split(sep).includes('node_modules')) {
    return { skipped: "not checked: outside an application; Backplane's own API files ship with its package" };
  }
  return { dir: join(packageRoot, 'api') };
}

/** Every check's result; `ok` is false when any failed. */
export async function runDoctor(flags: Flags): Promise<{ ok: boolean; checks: CheckResult[] }> {
  const env = process.env;
  const results: CheckResult[] = [];
  const configuration = await runCheck(configurationCheck, { env } as DoctorContext);
  results.push(configuration);
  if (configuration.status !== 'fail') {
    const config = loadConfig(env);
    const base = { env, config, apiFiles: apiFilesOf(flags), hostNow: () => Date.now(), fetchText };
    try {
      await withDatabase(
        (pool, { url }) =>
          withServices(pool, url, config, async ({ jobs }) => {
            const context: DoctorContext = { ...base, pool, jobs };
            for (const check of DATABASE_CHECKS) {
              results.push(await runCheck(check, context));
            }
          }),
        { schema: 'any' },
      );
    } catch (error) {
      results.push({ check: 'database', status: 'fail', message: `unreachable: ${(error as Error).message}; check DATABASE_URL and that the server runs` });
      results.push(
        ...skipped(
          DATABASE_CHECKS.filter((check) => !results.some((result) => result.check === check.name)),
          'not checked: the database did not answer',
        ),
      );
    }
    for (const check of LOCAL_CHECKS) {
      results.push(await runCheck(check, base as DoctorContext));
    }
  } else {
    results.push(...skipped([...DATABASE_CHECKS, ...LOCAL_CHECKS], 'not checked: the configuration does not parse'));
  }
  return { ok: !results.some((result) => result.status === 'fail'), checks: results };
}
