// A provider's revocation endpoint on loopback that takes ~20 ms per call (RFC 7009: form POST with
// client_secret_basic, 200 for any token), with just enough discovery metadata for openid-client.
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const expectedAuth = `Basic ${Buffer.from(`${process.env.BENCH_CLIENT_ID}:${process.env.BENCH_CLIENT_SECRET}`).toString('base64')}`;
const delayMs = Number(process.env.BENCH_REVOCATION_MS ?? '20');
const stats = { revoked: 0, refused: 0, inFlight: 0, maxInFlight: 0 };

const metadata = {
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  jwks_uri: `${issuer}/jwks`,
  revocation_endpoint: `${issuer}/revoke`,
  response_types_supported: ['code'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['RS256'],
};

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/.well-known/openid-configuration') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(metadata));
    return;
  }
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/revoke') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    const form = new URLSearchParams(body);
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    setTimeout(() => {
      stats.inFlight -= 1;
      if (req.headers.authorization !== expectedAuth || !form.get('token')) {
        stats.refused += 1;
        res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"invalid_client"}');
        return;
      }
      stats.revoked += 1;
      res.writeHead(200).end();
    }, delayMs);
  });
}).listen(port, '127.0.0.1');
