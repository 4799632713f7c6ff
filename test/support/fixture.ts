import type { TestFn } from 'ava';
import type { RunningInstance } from '../../src/app/instance.ts';
import { type TestDatabase, createTestDatabase } from './database.ts';
import { startTestInstance } from './instance.ts';
import { type TestAccount, accountWithToken, bearer } from './tokens.ts';

type Env = Record<string, string>;
type StartOptions = NonNullable<Parameters<typeof startTestInstance>[2]>;

/** What a test file's instances start from. */
export interface InstancesSetup<Name extends string> {
  /** How many instances share the database (1 unless told). */
  count?: number;
  /** Each instance's environment; a function is read in `before`, so it may use what earlier hooks made. */
  env?: Env | ((index: number) => Env);
  /** Options every instance starts with. */
  options?: StartOptions;
  /** Accounts made before any instance starts, so every instance loads their grants at start. */
  accounts?: Record<Name, Parameters<typeof accountWithToken>[1]>;
  /** Rows the instances must find when they start, written after the accounts. */
  seed?: (db: TestDatabase) => Promise<void>;
}

/** What the file's tests use; the fields are filled once the before hook has run. */
export interface RunningInstances<Name extends string> {
  readonly db: TestDatabase;
  /** The first instance. */
  readonly instance: RunningInstance;
  readonly instances: RunningInstance[];
  readonly accounts: Record<Name, TestAccount>;
  /** Each account's Authorization header. */
  readonly headers: Record<Name, Env>;
  /** The first instance's address for a path. */
  url(path: string): string;
}

/** A database, accounts and instances shared by the file, made and removed by serial hooks that order against the file's own. */
export function useInstances<Name extends string = never>(test: TestFn, setup: InstancesSetup<Name> = {}): RunningInstances<Name> {
  let db: TestDatabase | undefined;
  const instances: RunningInstance[] = [];
  const accounts = {} as Record<Name, TestAccount>;
  const headers = {} as Record<Name, Env>;
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) {
      throw new Error(`${what} is read before useInstances' before hook ran`);
    }
    return value;
  };

  test.serial.before(async () => {
    db = await createTestDatabase();
    for (const [name, options] of Object.entries(setup.accounts ?? {}) as Array<[Name, Parameters<typeof accountWithToken>[1]]>) {
      accounts[name] = await accountWithToken(db.pool, options);
      headers[name] = bearer(accounts[name].token);
    }
    await setup.seed?.(db);
    const envOf = (index: number) => (typeof setup.env === 'function' ? setup.env(index) : setup.env);
    const url = db.url;
    instances.push(...(await Promise.all(Array.from({ length: setup.count ?? 1 }, (_, index) => startTestInstance(url, envOf(index), setup.options)))));
  });

  test.serial.after.always(async () => {
    // The file's clients are done: nothing can race an idle connection's end, so no grace is waited for.
    await Promise.all(instances.map((instance) => instance.drain({ idleGraceMs: 0 })));
    await db?.drop();
  });

  return {
    get db() {
      return started(db, 'db');
    },
    get instance() {
      return started(instances[0], 'instance');
    },
    instances,
    accounts,
    headers,
    url: (path) => `${started(instances[0], 'instance').url}${path}`,
  };
}
