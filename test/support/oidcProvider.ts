// A real OpenID provider (oidc-provider) on 127.0.0.1 for the identity tests: authorization code
// with PKCE, refresh tokens, revocation. Its grants and keys live here, outside the listener, so a
// stop and a start on the same port keep every issued token. Browser steps are driven with plain HTTP.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from '../../src/platform/db/embedded.ts';

export const PUBLIC_URL = 'http://app.test';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** One entry of APP_OIDC_PROVIDERS for this provider. */
  entry(name: string): Record<string, unknown>;
  /** People who can sign in: subject → email. */
  addPerson(subject: string, email: string, verified?: boolean): void;
  /** Errors the provider hit while answering (none expected). */
  readonly errors: unknown[];
  /** Status of every revocation request the provider answered, in order. */
  readonly revocations: number[];
  /** Revocation requests received, answered or not. */
  readonly revocationsReceived: number;
  /** The traceparent header of every request the provider received, by path (tracing tests). */
  readonly traceparents: Array<{ path: string; traceparent: string | undefined }>;
  /** Slows every revocation answer (to hold a batch in flight). */
  revocationDelayMs: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** A refresh_token grant at the token endpoint, as the client would make it. */
  refresh(refreshToken: string): Promise<{ status: number; body: { error?: string; refresh_token?: string } }>;
}

const randomText = () => crypto.randomUUID().replace(/-/g, '');

type Stored = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** oidc-provider's storage contract over Maps that outlive the listener (one set per test provider). */
function memoryAdapterFactory() {
  const models = new Map<string, Map<string, Stored>>();
  return (model: string) => {
    const items = models.get(model) ?? new Map<string, Stored>();
    models.set(model, items);
    return {
      upsert: async (id: string, payload: Stored) => void items.set(id, payload),
      find: async (id: string) => items.get(id),
      findByUid: async (uid: string) => [...items.values()].find((item) => item.uid === uid),
      findByUserCode: async (userCode: string) => [...items.values()].find((item) => item.userCode === userCode),
      consume: async (id: string) => {
        const item = items.get(id);
        if (item) {
          item.consumed = Math.floor(Date.now() / 1000);
        }
      },
      destroy: async (id: string) => void items.delete(id),
      revokeByGrantId: async (grantId: string) => {
        for (const store of models.values()) {
          for (const [id, item] of store) {
            if (item.grantId === grantId) {
              store.delete(id);
            }
          }
        }
      },
    };
  };
}

const HOUR = 3600;

export async function startTestProvider(name = 'acme'): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = `client-${randomText().slice(0, 8)}`;
  const clientSecret = randomText();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const people = new Map<string, { email: string; email_verified: boolean }>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${PUBLIC_URL}/auth/providers/${name}/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    features: {
      devInteractions: { enabled: true },
      // RFC 7009 §2.1: a client may revoke only the tokens issued to it.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
    },
    scopes: ['openid', 'email', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_ctx, subject) => {
      const person = people.get(subject);
      return person ? { accountId: subject, claims: () => ({ sub: subject, ...person }) } : undefined;
    },
    // Every code exchange gets a refresh token, and a refresh keeps it (so a test can use it twice).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: false,
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-provider-cookie-key'] },
    adapter: memoryAdapterFactory(),
    ttl: {
      AccessToken: HOUR,
      AuthorizationCode: 60,
      IdToken: HOUR,
      Interaction: HOUR,
      Session: HOUR,
      Grant: 14 * 24 * HOUR,
      RefreshToken: 14 * 24 * HOUR,
    },
  });
  const errors: unknown[] = [];
  provider.on('server_error', (_ctx, error) => errors.push(error));
  const handle = provider.callback();

  const revocations: number[] = [];
  const traceparents: TestProvider['traceparents'] = [];
  const state = { revocationDelayMs: 0, received: 0 };
  let server: Server | undefined;

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    traceparents.push({ path: req.url?.split('?')[0] ?? '', traceparent: req.headers.traceparent?.toString() });
    if (req.url?.startsWith('/token/revocation')) {
      state.received += 1;
      res.on('finish', () => revocations.push(res.statusCode));
      if (state.revocationDelayMs > 0) {
        // A caller that died meanwhile (a killed instance) gets nothing: its request is gone.
        setTimeout(() => void (req.destroyed ? undefined : handle(req, res)), state.revocationDelayMs);
        return;
      }
    }
    void handle(req, res);
  };

  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onRequest);
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await start();

  return {
    issuer,
    clientId,
    clientSecret,
    entry: (entryName) => ({ name: entryName, issuer, client_id: clientId, client_secret: clientSecret, scopes: ['openid', 'email', 'offline_access'] }),
    addPerson: (subject, email, verified = true) => void people.set(subject, { email, email_verified: verified }),
    revocations,
    traceparents,
    errors,
    get revocationsReceived() {
      return state.received;
    },
    get revocationDelayMs() {
      return state.revocationDelayMs;
    },
    set revocationDelayMs(ms: number) {
      state.revocationDelayMs = ms;
    },
    start,
    // Open connections are cut too, so the service sees a provider that is down, not a slow one.
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server) {
          resolve();
          return;
        }
        server.close(() => resolve());
        server.closeAllConnections();
        server = undefined;
      }),
    async refresh(refreshToken) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
      });
      return { status: response.status, body: (await response.json()) as { error?: string; refresh_token?: string } };
    },
  };
}

/** A browser's cookie jar, just enough for the provider's interaction cookies. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') {
        this.cookies.delete(pair!.slice(0, at));
      } else {
        this.cookies.set(pair!.slice(0, at), value);
      }
    }
  }
  header(): string {
    return [...this.cookies].map(([key, value]) => `${key}=${value}`).join('; ');
  }
}

/**
 * Plays the browser from the provider's authorization URL: signs in as `subject` on the provider's
 * login form, consents, and returns the callback URL the provider redirects to (on PUBLIC_URL).
 */
export async function authorizeAtProvider(authorizationUrl: string, subject: string): Promise<URL> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step += 1) {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), Cookie: jar.header() } });
    jar.store(response);
    init = {};
    const location = response.headers.get('Location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (next.href.startsWith(PUBLIC_URL)) {
        return next;
      }
      url = next.href;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (response.status !== 200 || !action || !prompt) {
      throw new Error(`the provider answered ${response.status} at ${url}: ${html.slice(0, 300)}`);
    }
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: subject, password: 'any' } : { prompt };
    init = { method: 'POST', body: new URLSearchParams(form), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider never redirected back');
}

/** The service's callback URL for a URL on PUBLIC_URL (what a reverse proxy does). */
export const onInstance = (publicUrl: URL, instanceUrl: string) => `${instanceUrl}${publicUrl.pathname}${publicUrl.search}`;
