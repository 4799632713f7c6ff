import test from 'ava';
import { connect } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem, validateProblem } from '../../support/problems.ts';
import { bearer } from '../../support/tokens.ts';

const app = useInstances(test, { env: { APP_TEST_JOBS: '1' }, accounts: { admin: { roles: ['platform_admin'] } } });

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Sends bytes as they are and reads the answer until the server closes the connection (at most 10 s). */
async function sendRaw(bytes: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(app.url('/'));
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(bytes);
  });
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

const refusals: Array<[string, string, number, string]> = [
  ['headers over the size Node reads', `GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_header_too_large'],
  ['a malformed request line', 'this is not http\r\n\r\n', 400, 'bad_request'],
  ['a header without a colon', 'GET /livez HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n', 400, 'bad_request'],
  [
    'a malformed chunk size',
    'POST /auth/sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    400,
    'bad_request',
  ],
];

for (const [what, bytes, status, code] of refusals) {
  test(`${what} is ${status} ${code} as a problem record, and the connection closes`, async (t) => {
    const answer = await sendRaw(bytes);
    t.is(answer.status, status);
    t.regex(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
    t.is(answer.headers.get('connection'), 'close');
    t.is(Number(answer.headers.get('content-length')), Buffer.byteLength(answer.body));
    const problem = JSON.parse(answer.body) as Record<string, unknown>;
    t.true(validateProblem(problem), JSON.stringify(validateProblem.errors));
    t.like(problem, { status, code });
    t.is(problem.request_id, answer.headers.get('x-request-id'));
  });
}

test('the instance keeps serving after refusing malformed requests', async (t) => {
  await sendRaw('this is not http\r\n\r\n');
  t.is((await fetch(app.url('/livez'))).status, 200);
});

const putTick = (body: Uint8Array | string, encoding: string) =>
  fetch(app.url('/ops/jobs/definitions/test_tick'), {
    method: 'PUT',
    headers: { ...bearer(app.accounts.admin.token), 'Content-Type': 'application/json', 'Content-Encoding': encoding },
    body,
  });

test('a Content-Encoding the server cannot decode is 415 unsupported_content_encoding with Accept-Encoding', async (t) => {
  const json = JSON.stringify({ enabled: true, reason: 'encoded' });
  for (const encoding of ['bogus', 'compress', 'gzip, br']) {
    const response = await putTick(json, encoding);
    await assertProblem(t, response, 415, 'unsupported_content_encoding');
    t.is(response.headers.get('accept-encoding'), 'gzip, deflate, br');
  }
});

test('a body that does not decode as its Content-Encoding says is 400 bad_request; one that does is read', async (t) => {
  const json = JSON.stringify({ schedule: '@every 3s', reason: 'sent compressed' });
  await assertProblem(t, await putTick(json, 'br'), 400, 'bad_request');
  await assertProblem(t, await putTick(json, 'gzip'), 400, 'bad_request');
  t.like(await (await putTick(gzipSync(json), 'gzip')).json(), { schedule: '@every 3s' });
  t.like(await (await putTick(brotliCompressSync(JSON.stringify({ schedule: null, reason: 'back' })), 'br')).json(), { schedule: '@every 1s' });
  await assertProblem(t, await putTick(gzipSync('{"enabled": tru'), 'gzip'), 400, 'invalid_json');
});
