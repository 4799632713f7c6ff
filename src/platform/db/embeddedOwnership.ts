import pg from 'pg';

/**
 * Which process owns an embedded PostgreSQL (stops it on exit, restarts it when it dies): the one
 * holding this session advisory lock in the server's `postgres` database. The server drops it
 * when the holder's connection ends, so an owner killed with SIGKILL leaves no stale claim behind
 * (a pid file would, and its pid may be reused).
 */
const OWNER_LOCK_KEY = 72_010_532;
/** The owner's connection is named after its pid, so another process can say who owns the server. */
const OWNER_APPLICATION = 'backplane-embedded-owner';

export interface Ownership {
  /** False once the connection holding the lock has ended: the server stopped or died. */
  held(): boolean;
  release(): Promise<void>;
}

export type Claim = { owned: true; ownership: Ownership } | { owned: false; owner: number | undefined };

const ownerPidSql = `
select a.application_name as name
from pg_locks l
join pg_stat_activity a on a.pid = l.pid
where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
  and l.classid = 0 and l.objid = $1 and l.objsubid = 1`;

/** Takes ownership of the server at adminUrl unless a live process holds it; then says which. */
export async function claimOwnership(adminUrl: string): Promise<Claim> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: `${OWNER_APPLICATION}:${process.pid}`, connectionTimeoutMillis: 5_000 });
  let ended = false;
  // The server stopping ends this connection: held() reports it, nothing else has to.
  client.on('error', () => undefined);
  client.on('end', () => (ended = true));
  await client.connect();
  try {
    const { rows } = await client.query<{ got: boolean }>('select pg_try_advisory_lock($1) as got', [OWNER_LOCK_KEY]);
    if (rows[0]!.got) {
      return { owned: true, ownership: { held: () => !ended, release: () => client.end().catch(() => undefined) } };
    }
    const holder = await client.query<{ name: string }>(ownerPidSql, [OWNER_LOCK_KEY]);
    const pid = new RegExp(`^${OWNER_APPLICATION}:(\\d+)$`).exec(holder.rows[0]?.name ?? '')?.[1];
    await client.end();
    return { owned: false, owner: pid === undefined ? undefined : Number(pid) };
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}
