/** Why an attempt stopped: its timeout passed. */
export class JobTimeoutError extends Error {
  override readonly name = 'JobTimeoutError';
  constructor(seconds: number) {
    super(`the attempt did not finish within ${seconds} s`);
  }
}

/** Why an attempt stopped: the instance drains and the drain timeout passed. */
export class JobShutdownError extends Error {
  override readonly name = 'JobShutdownError';
  constructor() {
    super('the instance stopped before the attempt finished');
  }
}

/** Why an attempt stopped: its lease lapsed and another instance took the run over. */
export class JobLeaseLostError extends Error {
  override readonly name = 'JobLeaseLostError';
  constructor() {
    super('another instance took the run over after its lease expired');
  }
}

const CODE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const SQLSTATE = /^[0-9A-Z]{5}$/;
const MAX_SUMMARY = 300;
// user:password@ in a URL, and key=value pairs naming a secret.
const CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@|\b(password|passwd|secret|token|key)=\S+/gi;

/**
 * The short error summary stored with a run and shown by /ops: a code and our own message where the
 * error has one, the SQLSTATE alone for a database error (driver text can quote data), and never
 * anything shaped like a credential. The full error goes to the instance log.
 */
export function summarizeError(error: unknown): string {
  let summary: string;
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof JobTimeoutError) {
    summary = `timeout: ${error.message}`;
  } else if (typeof code === 'string' && CODE.test(code)) {
    summary = `${code}: ${(error as Error).message ?? ''}`;
  } else if (typeof code === 'string' && SQLSTATE.test(code)) {
    summary = `database_error: the database refused a statement (SQLSTATE ${code})`;
  } else if (error instanceof Error) {
    summary = `${error.name}: ${error.message}`;
  } else {
    summary = 'error: the handler threw a value that is not an Error';
  }
  return summary
    .replace(CREDENTIALS, (_match, scheme: string | undefined, key: string | undefined) => (scheme ? `${scheme}[redacted]@` : `${key}=[redacted]`))
    .slice(0, MAX_SUMMARY);
}
