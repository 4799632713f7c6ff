import { join, resolve } from 'node:path';
import { loadConfig } from '../app/config.ts';
import { packageRoot } from '../platform/packageRoot.ts';
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
    printTable(['STATUS', 'CHECK', 'FINDING'], report.checks.map((result) => [result.status, result.check, result.message]));
  }
  return report.ok ? 0 : 1;
}

/** The checks that did not run, listed as such rather than left out or called ok. */
function skipped(checks: Check[], message: string): CheckResult[] {
  return checks.map((check) => ({ check: check.name, status: 'skip', message }));
}

/** Every check's result; `ok` is false when any failed. */
export async function runDoctor(flags: Flags): Promise<{ ok: boolean; checks: CheckResult[] }> {
  const env = process.env;
  const results: CheckResult[] = [];
  const configuration = await runCheck(configurationCheck, { env } as DoctorContext);
  results.push(configuration);
  if (configuration.status !== 'fail') {
    const config = loadConfig(env);
    const base = { env, config, apiDir: resolve(flag(flags, 'api-dir') ?? join(packageRoot, 'api')), hostNow: () => Date.now(), fetchText };
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
      results.push(...skipped(DATABASE_CHECKS.filter((check) => !results.some((result) => result.check === check.name)), 'not checked: the database did not answer'));
    }
    for (const check of LOCAL_CHECKS) {
      results.push(await runCheck(check, base as DoctorContext));
    }
  } else {
    results.push(...skipped([...DATABASE_CHECKS, ...LOCAL_CHECKS], 'not checked: the configuration does not parse'));
  }
  return { ok: !results.some((result) => result.status === 'fail'), checks: results };
}
