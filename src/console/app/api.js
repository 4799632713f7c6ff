// The session lives in this module's memory only: nothing is written to storage or cookies.
let session;

export class ProblemError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || '';
    this.problem = problem;
  }
}

export const currentSession = () => session;

export function endSession() {
  session = undefined;
}

async function send(method, path, body, token) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await response.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    throw new ProblemError(response.status, data || {});
  }
  return { status: response.status, data };
}

/** Sends with the session's token; on 401 the session is over and `onExpired` is told. */
export async function api(method, path, body) {
  try {
    return (await send(method, path, body, session?.token)).data;
  } catch (error) {
    if (error instanceof ProblemError && error.status === 401 && session) {
      session.onExpired?.(error);
    }
    throw error;
  }
}

/** Password step: tokens, or a challenge for the second factor. */
export async function signInWithPassword(email, password) {
  const { status, data } = await send('POST', '/auth/sign-in', { email, password });
  return status === 202 ? { challenge: data.challenge_token } : { token: data.access_token };
}

export async function signInWithSecondFactor(challenge, code, isRecovery) {
  const body = isRecovery ? { challenge_token: challenge, recovery_code: code } : { challenge_token: challenge, code };
  return (await send('POST', '/auth/sign-in/mfa', body)).data.access_token;
}

/** Starts a session with a token: who it belongs to and what it may do. */
export async function startSession(token, onExpired) {
  const { data: me } = await send('GET', '/auth/me', undefined, token);
  session = { token, me, permissions: new Set(me.permissions || []), onExpired };
  return session;
}

export const may = (permission) => Boolean(session?.permissions.has(permission));

export async function signOut() {
  const token = session?.token;
  endSession();
  if (token) {
    await send('POST', '/auth/sign-out', {}, token).catch(() => undefined);
  }
}
