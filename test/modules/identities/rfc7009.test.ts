import test from 'ava';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../../src/platform/db/embedded.ts';
import { revokeTokens } from '../../../src/modules/identities/tasks/revokeTokens.ts';
import { TEST_ENCRYPTION_KEY } from '../../support/instance.ts';
import { box } from './support.ts';

interface Seen {
  authorization: string | undefined;
  form: URLSearchParams;
}

/** A revocation endpoint on loopback whose answer each test decides. */
async function endpoint(answer: (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push({ authorization: req.headers.authorization, form });
      answer(req, res, form);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/revoke`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const provider = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'acme',
  revocationEndpoint: url,
  clientId: 'client id',
  clientSecret: 's3cr&t',
  authMethod: 'client_secret_basic' as const,
  insecureLoopback: true,
  ...extra,
});
const token = (id: string, plaintext: string, subject = 'sub') => ({
  id,
  provider: 'acme',
  subject,
  tokenSealed: box.seal(plaintext, `identity:acme:${subject}`),
});
const run = (providers: ReturnType<typeof provider>[], tokens: ReturnType<typeof token>[], timeoutMs = 2_000) =>
  revokeTokens({ keys: TEST_ENCRYPTION_KEY, providers, tokens, concurrency: 4, timeoutMs });

test.serial('a revocation is a form POST of the token with client_secret_basic (form-encoded id and secret); 200 means revoked', async (t) => {
  const server = await endpoint((_req, res) => res.writeHead(200).end());
  t.deepEqual(await run([provider(server.url)], [token('1', 'the-refresh-token')]), [{ id: '1', revoked: true }]);
  const [seen] = server.seen;
  t.is(seen!.form.get('token'), 'the-refresh-token');
  t.is(seen!.form.get('token_type_hint'), 'refresh_token');
  t.is(seen!.authorization, `Basic ${Buffer.from('client+id:s3cr%26t').toString('base64')}`);
  await server.close();
});

test.serial('client_secret_post sends the client credentials in the form', async (t) => {
  const server = await endpoint((_req, res) => res.writeHead(200).end());
  await run([provider(server.url, { authMethod: 'client_secret_post' })], [token('1', 't')]);
  t.is(server.seen[0]!.authorization, undefined);
  t.is(server.seen[0]!.form.get('client_id'), 'client id');
  t.is(server.seen[0]!.form.get('client_secret'), 's3cr&t');
  await server.close();
});

test.serial('refusals, outages and timeouts become short codes without provider or token text', async (t) => {
  const server = await endpoint((_req, res, form) => {
    const which = form.get('token');
    if (which === 'client') {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"invalid_client","error_description":"the token client was wrong"}');
    } else if (which === 'busy') {
      res.writeHead(503, { 'Retry-After': '5' }).end('try later');
    } else if (which === 'slow') {
      setTimeout(() => res.writeHead(200).end(), 3_000);
    } else {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"Not A Code <script>"}');
    }
  });
  const results = await run([provider(server.url)], [token('1', 'client'), token('2', 'busy'), token('3', 'slow'), token('4', 'odd')], 1_000);
  t.deepEqual(results, [
    { id: '1', revoked: false, error: 'http_401:invalid_client' },
    { id: '2', revoked: false, error: 'http_503' },
    { id: '3', revoked: false, error: 'timeout' },
    { id: '4', revoked: false, error: 'http_400' },
  ]);
  await server.close();
});

test.serial('an unreachable endpoint, an unknown provider and a token sealed for another subject fail row by row', async (t) => {
  const url = `http://127.0.0.1:${await freePort()}/revoke`;
  const results = await run([provider(url)], [token('1', 't'), { ...token('2', 't'), provider: 'gone' }, { ...token('3', 't', 'a'), subject: 'b' }]);
  t.deepEqual(results, [
    { id: '1', revoked: false, error: 'network_error:ECONNREFUSED' },
    { id: '2', revoked: false, error: 'provider_not_configured' },
    { id: '3', revoked: false, error: 'token_unreadable' },
  ]);
});

test.serial('http is refused unless the provider is a loopback issuer allowed it', async (t) => {
  const server = await endpoint((_req, res) => res.writeHead(200).end());
  t.deepEqual(await run([provider(server.url, { insecureLoopback: false })], [token('1', 't')]), [{ id: '1', revoked: false, error: 'insecure_endpoint' }]);
  t.is(server.seen.length, 0);
  await server.close();
});

test.serial('no more requests are in flight than the concurrency allows', async (t) => {
  let inFlight = 0;
  let most = 0;
  const server = await endpoint((_req, res) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    setTimeout(() => {
      inFlight -= 1;
      res.writeHead(200).end();
    }, 20);
  });
  const results = await run(
    [provider(server.url)],
    Array.from({ length: 20 }, (_v, i) => token(String(i), `t${i}`)),
  );
  t.true(results.every((result) => result.revoked));
  t.is(most, 4);
  await server.close();
});
