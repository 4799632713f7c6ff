// The session lives in this module's memory and, so a reload keeps it, in this tab's sessionStorage
// (gone with the tab, never shared with another tab, never sent anywhere); sign-out removes it (ADR 0100, amended 2026-11-26).
let session;
const STORED = 'backplane.console.session';

function store(current) {
  try {
    window.sessionStorage.setItem(STORED, JSON.stringify({ token: current.token, refreshToken: current.refreshToken ?? null }));
  } catch {
    // Storage refused (private mode, quota): the session stays in memory, as before.
  }
}

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
  try {
    window.sessionStorage.removeItem(STORED);
  } catch {
    // Nothing was stored.
  }
}

/** The tokens this tab stored before a reload, if any. */
export function storedSession() {
  try {
    const stored = JSON.parse(window.sessionStorage.getItem(STORED) ?? 'null');
    return stored && typeof stored.token === 'string' ? stored : undefined;
  } catch {
    return undefined;
  }
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

let refreshing;

/** Exchanges the refresh token (single use) for a new pair; concurrent callers share one exchange. */
function refreshTokens(current) {
  refreshing ??= send('POST', '/auth/token', { refresh_token: current.refreshToken })
    .then(({ data }) => {
      current.token = data.access_token;
      current.refreshToken = data.refresh_token;
      if (current === session) {
        store(current);
      }
      return true;
    })
    .catch(() => false)
    .finally(() => (refreshing = undefined));
  return refreshing;
}

/**
 * Sends with the session's token. A 401 with a refresh token at hand (a password sign-in) renews the
 * pair once and retries; otherwise the session is over and `onExpired` is told.
 */
export async function api(method, path, body) {
  const current = session;
  try {
    return (await send(method, path, body, current?.token)).data;
  } catch (error) {
    if (!(error instanceof ProblemError && error.status === 401 && current && current === session)) {
      throw error;
    }
    if (current.refreshToken && (await refreshTokens(current))) {
      return (await send(method, path, body, current.token)).data;
    }
    current.onExpired?.(error);
    throw error;
  }
}

/** Password step: tokens, or a challenge for the second factor. */
export async function signInWithPassword(email, password) {
  const { status, data } = await send('POST', '/auth/sign-in', { email, password });
  return status === 202 ? { challenge: data.challenge_token } : { token: data.access_token, refreshToken: data.refresh_token };
}

export async function signInWithSecondFactor(challenge, code, isRecovery) {
  const body = isRecovery ? { challenge_token: challenge, recovery_code: code } : { challenge_token: challenge, code };
  const { data } = await send('POST', '/auth/sign-in/mfa', body);
  return { token: data.access_token, refreshToken: data.refresh_token };
}

/** Starts a session with a token (and its refresh token, after a sign-in): who it belongs to and what it may do. */
export async function startSession(token, refreshToken, onExpired) {
  const { data: me } = await send('GET', '/auth/me', undefined, token);
  session = { token, refreshToken, me, permissions: new Set(me.permissions || []), onExpired };
  store(session);
  return session;
}

/** After a reload: the stored session, its pair renewed once when the access token has expired meanwhile. */
export async function resumeSession(stored, onExpired) {
  try {
    return await startSession(stored.token, stored.refreshToken ?? undefined, onExpired);
  } catch (error) {
    const pair = { token: stored.token, refreshToken: stored.refreshToken };
    if (error instanceof ProblemError && error.status === 401 && pair.refreshToken && (await refreshTokens(pair))) {
      return startSession(pair.token, pair.refreshToken, onExpired);
    }
    throw error;
  }
}

export const may = (permission) => Boolean(session?.permissions.has(permission));

/**
 * Ends the sign-in's session on the server (its refresh token stops working), then in this tab. A
 * refused sign-out throws and leaves the tab signed in: the session is still alive on the server.
 */
export async function signOut() {
  const ending = session;
  if (ending) {
    const tell = () => send('POST', '/auth/sign-out', ending.refreshToken ? { refresh_token: ending.refreshToken } : {}, ending.token);
    try {
      await tell();
    } catch (error) {
      const expired = error instanceof ProblemError && error.status === 401;
      // An expired access token is renewed once and the sign-out sent with the new pair.
      if (expired && ending.refreshToken && (await refreshTokens(ending))) {
        await tell();
      } else if (!expired) {
        throw error;
      }
      // Else the token no longer works and cannot be renewed: there is nothing left to end on the server.
    }
  }
  endSession();
}
