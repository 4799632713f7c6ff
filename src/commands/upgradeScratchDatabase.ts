import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { UpgradeRefused, oneLine } from './upgradeRepository.ts';

/** A throw-away database beside the developer's, where the upgrade applies the migrations and runs doctor. */
export interface ScratchDatabase {
  url: string;
  /** True when it is a copy of the developer's database; false when it was made empty (why says why no copy). */
  copy: boolean;
  why?: string;
  drop(): Promise<void>;
}

const withPath = (url: string, database: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
};

/** A connection to another database of the server: a database used as a template must have no session. */
async function connectBeside(url: string): Promise<pg.Client> {
  let last: unknown;
  for (const database of ['postgres', 'template1']) {
    const client = new pg.Client({ connectionString: withPath(url, database), application_name: 'backplane-upgrade' });
    try {
      await client.connect();
      return client;
    } catch (error) {
      last = error;
      await client.end().catch(() => undefined);
    }
  }
  throw last;
}

/**
 * A copy of the database at url (CREATE DATABASE … TEMPLATE), made on its server; when the server
 * cannot copy it (someone is connected to it, as a running `npm start` is) an empty one, migrated
 * from scratch. A server that makes neither is a refusal: the upgrade never migrates the developer's.
 */
export async function createScratchDatabase(url: string, description: string): Promise<ScratchDatabase> {
  const source = decodeURIComponent(new URL(url).pathname.slice(1)) || decodeURIComponent(new URL(url).username);
  const name = `${source.slice(0, 40)}_upgrade_${randomBytes(4).toString('hex')}`;
  let client: pg.Client;
  try {
    client = await connectBeside(url);
  } catch (error) {
    throw new UpgradeRefused(
      `upgrade tries the migrations on a throw-away database and cannot reach the server of ${description} (${oneLine(error)}); nothing was changed`,
    );
  }
  try {
    const made = await client
      .query(`create database ${client.escapeIdentifier(name)} template ${client.escapeIdentifier(source)}`)
      .then(() => ({ copy: true as const }))
      .catch(async (error: unknown) => {
        await client.query(`create database ${client.escapeIdentifier(name)} template template0`);
        return { copy: false as const, why: oneLine(error) };
      })
      .catch((error: unknown) => {
        throw new UpgradeRefused(
          `upgrade tries the migrations on a throw-away database and ${description} refused to create one (${oneLine(error)}): let this user create databases; nothing was changed`,
        );
      });
    return {
      url: withPath(url, name),
      ...made,
      async drop() {
        const admin = await connectBeside(url);
        try {
          await admin.query(`drop database if exists ${admin.escapeIdentifier(name)} with (force)`);
        } finally {
          await admin.end();
        }
      },
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}
