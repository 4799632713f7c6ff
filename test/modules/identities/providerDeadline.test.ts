import test from 'ava';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchWithinRequestDeadline } from '../../../src/modules/identities/providers.ts';
import { withDeadlineAt } from '../../../src/platform/db/deadline.ts';

// Issue 30 item 9: a provider call made for a request ends by the request's deadline, not only by its own 5 s.

let provider: Server;
let url: string;

test.before(async () => {
  // A provider that takes the request and never answers.
  provider = createServer(() => undefined);
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/token`;
});

test.after.always(() => {
  provider?.closeAllConnections();
  provider?.close();
});

/** fetch rejects with a DOMException, which ava's throwsAsync does not take for an error. */
const failure = (call: Promise<Response>) =>
  call.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

const request = { method: 'POST', headers: {}, body: 'grant_type=authorization_code', redirect: 'manual' as const };

test('a provider call ends at the request deadline even when its own bound is far off', async (t) => {
  const ownBound = AbortSignal.timeout(600_000);
  const error = await failure(withDeadlineAt(performance.now() + 200, () => fetchWithinRequestDeadline(url, { ...request, signal: ownBound })));
  t.is(error?.name, 'TimeoutError');
  t.false(ownBound.aborted);
});

test('a provider call made past the request deadline is not waited on', async (t) => {
  const error = await failure(withDeadlineAt(performance.now() - 1, () => fetchWithinRequestDeadline(url, request)));
  t.is(error?.name, 'TimeoutError');
});

test('outside a request the call keeps only its own bound', async (t) => {
  const error = await failure(fetchWithinRequestDeadline(url, { ...request, signal: AbortSignal.timeout(200) }));
  t.is(error?.name, 'TimeoutError');
});
