import { createHash } from 'node:crypto';
import type pg from 'pg';
import { sleep } from '../time.ts';
import { PG, pgCode } from './pgErrors.ts';
import { splitStatements, withoutComments } from './sqlStatements.ts';

/** First line of a migration that runs statement by statement, outside a transaction (ADR 0125). */
export const NO_TRANSACTION_MARKER = '-- backplane:no-transaction';

export interface OnlineMigrationOptions {
  /** How long a statement waits for a lock that writers would queue behind (ADR 0125). */
  lockTimeoutMs: number;
  /** How long a CONCURRENTLY statement waits for older transactions: writers never queue behind it. */
  concurrentLockTimeoutMs: number;
  /** Tries per statement (no-transaction) or per migration (in a transaction) that time out on a lock. */
  attempts: number;
  /** Wait before the second try, doubled before each next one up to maxBackoffMs. */
  firstBackoffMs: number;
  maxBackoffMs: number;
}

/**
 * Writes queue behind a DDL statement waiting for its lock, so it gives up after 200 ms (a fifth
 * of the 1 s an insert may wait) and tries again after a pause longer than that, in which the
 * queued writes go through: 8 tries with 0.25-4 s pauses span about 17 s, past a request's 5 s
 * deadline and an autovacuum or retention batch, which are what holds such locks; longer means a
 * stuck transaction, and the migration fails so an operator looks while the old release serves.
 */
export const ONLINE_MIGRATION_DEFAULTS: OnlineMigrationOptions = {
  lockTimeoutMs: 200,
  concurrentLockTimeoutMs: 60_000,
  attempts: 8,
  firstBackoffMs: 250,
  maxBackoffMs: 4_000,
};

export function runsInTransaction(sql: string): boolean {
  return !sql.trimStart().toLowerCase().startsWith(NO_TRANSACTION_MARKER);
}

/** Runs `attempt` again after a lock timeout, with doubling pauses; other errors pass at once. */
export async function retryOnLockTimeout<T>(options: OnlineMigrationOptions, attempt: () => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (pgCode(error) !== PG.lockNotAvailable || tried >= options.attempts) {
        throw error;
      }
      await sleep(Math.min(options.firstBackoffMs * 2 ** (tried - 1), options.maxBackoffMs));
    }
  }
}

/** The migration's statements in one transaction, with its ledger row; all again on a lock timeout. */
export async function applyInTransaction(client: pg.ClientBase, sql: string, record: () => Promise<unknown>, options: OnlineMigrationOptions): Promise<void> {
  await retryOnLockTimeout(options, async () => {
    await client.query('begin');
    try {
      await client.query(`set local lock_timeout = ${options.lockTimeoutMs}`);
      await client.query(sql);
      await record();
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  });
}

const CREATE_INDEX_CONCURRENTLY =
  /^create\s+(unique\s+)?index\s+concurrently\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)\s+on\s+(?:only\s+)?([a-z_][a-z0-9_.]*)\s+([\s\S]*)$/i;

/**
 * Each statement alone, outside a transaction, then the ledger row: a statement that failed is
 * tried again (each must be idempotent: `if not exists`), an INVALID index a failed build left is
 * dropped and built again, and an index on a partitioned table is built partition by partition.
 */
export async function applyWithoutTransaction(
  client: pg.ClientBase,
  sql: string,
  record: () => Promise<unknown>,
  options: OnlineMigrationOptions,
): Promise<void> {
  for (const statement of splitStatements(sql)) {
    const index = CREATE_INDEX_CONCURRENTLY.exec(withoutComments(statement));
    if (index) {
      const [, unique, name, table, definition] = index as unknown as [string, string | undefined, string, string, string];
      await createIndexConcurrently(client, { unique: Boolean(unique), name, table, definition }, statement, options);
    } else {
      await runStatement(client, statement, /\bconcurrently\b/i.test(statement) ? options.concurrentLockTimeoutMs : options.lockTimeoutMs, options);
    }
  }
  await record();
}

async function runStatement(client: pg.ClientBase, statement: string, lockTimeoutMs: number, options: OnlineMigrationOptions): Promise<void> {
  await retryOnLockTimeout(options, async () => {
    await client.query(`set lock_timeout = ${lockTimeoutMs}`);
    try {
      await client.query(statement);
    } finally {
      await client.query('reset lock_timeout');
    }
  });
}

interface IndexBuild {
  unique: boolean;
  name: string;
  table: string;
  definition: string;
}

// Relation kind of the table an index is built on: 'p' is partitioned (no CONCURRENTLY on it).
const tableKindSql = `select relkind::text as kind from pg_class where oid = to_regclass($1)`;
// Leaf partitions of a partitioned table, and whether any of them is partitioned in turn.
const partitionsSql = `
select c.relname as name, n.nspname as schema, c.relkind::text as kind
  from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_namespace n on n.oid = c.relnamespace
 where i.inhparent = to_regclass($1) order by c.relname`;
// An index left INVALID by a failed CONCURRENTLY build (not a partitioned parent's, which is INVALID until attached).
const invalidIndexSql = `
select 1 from pg_index x join pg_class c on c.oid = x.indexrelid
 where x.indexrelid = to_regclass($1) and not x.indisvalid and c.relkind = 'i'`;
// Whether a partition's index is already attached to the parent's index.
const attachedSql = `select 1 from pg_inherits where inhrelid = to_regclass($1) and inhparent = to_regclass($2)`;

async function createIndexConcurrently(client: pg.ClientBase, build: IndexBuild, statement: string, options: OnlineMigrationOptions): Promise<void> {
  const kind = (await client.query<{ kind: string }>(tableKindSql, [build.table])).rows[0]?.kind;
  if (kind !== 'p') {
    await buildOneIndex(client, build.name, statement, options);
    return;
  }
  const unique = build.unique ? 'unique ' : '';
  // The parent's index is only a catalog entry (INVALID until every partition's is attached): brief lock.
  await runStatement(client, `create ${unique}index if not exists ${build.name} on only ${build.table} ${build.definition}`, options.lockTimeoutMs, options);
  const schema = build.table.includes('.') ? `${build.table.split('.')[0]}.` : '';
  for (const partition of (await client.query<{ name: string; schema: string; kind: string }>(partitionsSql, [build.table])).rows) {
    if (partition.kind === 'p') {
      throw new Error(`${partition.name} is partitioned in turn: build ${build.name} on its partitions in the migration itself`);
    }
    const child = partitionIndexName(build.name, partition.name);
    const qualified = `${schema}${child}`;
    await buildOneIndex(
      client,
      qualified,
      `create ${unique}index concurrently if not exists ${child} on ${partition.schema}.${partition.name} ${build.definition}`,
      options,
    );
    if ((await client.query(attachedSql, [qualified, `${schema}${build.name}`])).rowCount === 0) {
      await runStatement(client, `alter index ${schema}${build.name} attach partition ${qualified}`, options.lockTimeoutMs, options);
    }
  }
}

/** Drops what an earlier failed build left INVALID, so `if not exists` does not take it for done. */
async function buildOneIndex(client: pg.ClientBase, name: string, statement: string, options: OnlineMigrationOptions): Promise<void> {
  await retryOnLockTimeout(options, async () => {
    if ((await client.query(invalidIndexSql, [name])).rowCount! > 0) {
      await runStatement(client, `drop index concurrently if exists ${name}`, options.concurrentLockTimeoutMs, options);
    }
    await runStatement(client, statement, options.concurrentLockTimeoutMs, { ...options, attempts: 1 });
  });
}

/** `<index>_<partition>` within PostgreSQL's 63 bytes, a hash keeping long names apart. */
export function partitionIndexName(index: string, partition: string): string {
  const name = `${index}_${partition}`;
  if (name.length <= 63) {
    return name;
  }
  return `${name.slice(0, 54)}_${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}
