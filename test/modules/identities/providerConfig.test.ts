import test from 'ava';
import { ConfigError, loadConfig } from '../../../src/app/config.ts';

const entry = (extra: Record<string, unknown> = {}) => ({
  name: 'acme',
  issuer: 'https://id.example.com',
  client_id: 'backplane',
  client_secret: 'hunter2-secret',
  ...extra,
});
const load = (value: unknown, env: Record<string, string> = {}) =>
  loadConfig({ APP_OIDC_PROVIDERS: typeof value === 'string' ? value : JSON.stringify(value), ...env });

test('no providers by default', (t) => {
  t.deepEqual(loadConfig({}).oidcProviders, []);
  t.deepEqual(load('').oidcProviders, []);
});

test('a provider list is read with defaults for scopes and client authentication', (t) => {
  const [provider] = load([
    entry(),
    entry({ name: 'other', scopes: ['openid', 'email', 'offline_access'], token_endpoint_auth_method: 'client_secret_post' }),
  ]).oidcProviders;
  t.deepEqual(provider, {
    name: 'acme',
    issuer: 'https://id.example.com',
    clientId: 'backplane',
    clientSecret: 'hunter2-secret',
    scopes: ['openid', 'email'],
    authMethod: 'client_secret_basic',
    authorizationParams: {},
    insecureLoopback: false,
  });
  t.is(load([entry({ authorization_params: { access_type: 'offline' } })]).oidcProviders[0]!.authorizationParams.access_type, 'offline');
});

test('http is allowed only for a loopback issuer outside production', (t) => {
  t.true(load([entry({ issuer: 'http://127.0.0.1:9000' })]).oidcProviders[0]!.insecureLoopback);
  t.true(load([entry({ issuer: 'http://localhost:9000' })]).oidcProviders[0]!.insecureLoopback);
  t.throws(() => load([entry({ issuer: 'http://id.example.com' })]), { instanceOf: ConfigError, message: /APP_OIDC_PROVIDERS/ });
  t.throws(() => load([entry({ issuer: 'http://127.0.0.1:9000' })], { NODE_ENV: 'production', APP_ENCRYPTION_KEY: 'x' }), { message: /APP_OIDC_PROVIDERS/ });
});

for (const [what, value] of [
  ['invalid JSON', '[{"name": "acme",'],
  ['an object instead of a list', { name: 'acme' }],
  ['a missing client secret', [entry({ client_secret: undefined })]],
  ['an unknown field', [entry({ client_secert: 'typo' })]],
  ['a bad name', [entry({ name: 'Acme Corp' })]],
  ['an issuer that is not a URL', [entry({ issuer: 'id.example.com' })]],
  ['scopes without openid', [entry({ scopes: ['email'] })]],
  ['a repeated name', [entry(), entry()]],
  ['an authorization parameter of the flow itself', [entry({ authorization_params: { state: 'fixed' } })]],
  ['an unknown client authentication', [entry({ token_endpoint_auth_method: 'none' })]],
] as const) {
  test(`${what} stops start-up naming the variable, never quoting the secret`, (t) => {
    const error = t.throws(() => load(value), { instanceOf: ConfigError });
    t.regex(error!.message, /^APP_OIDC_PROVIDERS /);
    t.false(error!.message.includes('hunter2'));
  });
}
