import { type Config, ConfigError } from './config.ts';

/** PostgreSQL's SQLSTATEs for a session the server refused, in words (the server's own message follows). */
const REFUSED: Record<string, string> = {
  '28P01': 'authentication failed',
  '28000': 'authentication failed',
  '3D000': 'database does not exist',
  '57P03': 'the server refused the session while starting up or shutting down',
  '53300': 'the server refused the session: no connection slot left',
};

/** Node's socket errors, in words. */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection closed by the server',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name not found (DNS did not answer)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the network',
};

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/** The error and what it wraps (pg's timeout wraps the socket's error; a dual-stack connect throws an AggregateError). */
function chain(error: unknown): ErrorFields[] {
  const found: ErrorFields[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && found.length < 10) {
    const next = queue.shift();
    if (typeof next === 'object' && next !== null) {
      const fields = next as ErrorFields;
      found.push(fields);
      queue.push(...(Array.isArray(fields.errors) ? fields.errors : []), fields.cause);
    }
  }
  return found;
}

/**
 * The first connection to an external database (DATABASE_URL, or DATABASE_LISTEN_URL that
 * commands and migrations use) failing, as one line naming the variable and what failed; never the
 * password. Undefined when the error is not such a failure, or the database is the embedded one.
 */
export function describeDatabaseFailure(error: unknown, config: Config): string | undefined {
  const listen = config.databaseListenUrl !== undefined;
  const urlText = listen ? config.databaseListenUrl : config.databaseUrl;
  if (!urlText) {
    return undefined;
  }
  const source = listen ? config.databaseSources.listenUrl : config.databaseSources.url;
  const url = new URL(urlText);
  const where = `${url.searchParams.get('host') ?? url.hostname}:${url.searchParams.get('port') ?? (url.port || '5432')}`;
  const user = decodeURIComponent(url.username) || 'the default user';
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  const errors = chain(error);
  const code = (wanted: Record<string, string>) =>
    errors.map((item) => item.code).find((value): value is string => typeof value === 'string' && value in wanted);
  const message = errors.map((item) => item.message).find((value): value is string => typeof value === 'string' && value !== '') ?? '';
  const password = decodeURIComponent(url.password);
  // The server's words (role "x" does not exist, no pg_hba.conf entry …) never hold the password; this stays true if it ever did.
  const said = (password ? message.split(password).join('***') : message).split('\n')[0];
  const refused = code(REFUSED);
  if (refused === '3D000') {
    return `${source}: database "${database}" does not exist on ${where}`;
  }
  if (refused === '28P01') {
    return `${source}: authentication failed for user "${user}" on ${where}: check the user and its password`;
  }
  if (refused === '28000') {
    return `${source}: authentication failed for user "${user}" on ${where} (${said})`;
  }
  if (refused) {
    return `${source}: ${REFUSED[refused]} on ${where}`;
  }
  if (/timeout exceeded when trying to connect|connection timeout/i.test(message) || code({ ETIMEDOUT: '' })) {
    return `${source}: timed out connecting to ${where}`;
  }
  const unreachable = code(UNREACHABLE);
  if (unreachable) {
    return `${source}: could not connect to ${where} (${UNREACHABLE[unreachable]})`;
  }
  if (/^Connection terminated/.test(message)) {
    return `${source}: could not connect to ${where} (the server closed the connection)`;
  }
  return undefined;
}

/** What to throw for a failed first contact: a connection failure as a one-line ConfigError (exit 2), anything else as it is. */
export function databaseFailure(error: unknown, config: Config): unknown {
  const line = describeDatabaseFailure(error, config);
  return line === undefined ? error : new ConfigError(line);
}
