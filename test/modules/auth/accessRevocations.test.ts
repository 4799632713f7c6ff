import test from 'ava';
import pino from 'pino';
import { ACCESS_REVOCATIONS_CHANNEL, createAccessRevocations } from '../../../src/modules/auth/accessRevocations.ts';
import type { Queryable } from '../../../src/platform/db/pool.ts';
import type { NotificationListener } from '../../../src/platform/db/listener.ts';

/** A listener whose notifications the test sends, and a table the test fills. */
function fakes(rows: Array<Record<string, unknown>> = []) {
  const handlers = new Map<string, (payload: string) => void>();
  let loads = 0;
  const listener: NotificationListener = {
    listen: (channel, handler) => void handlers.set(channel, handler),
    onConnected: () => undefined,
    listening: () => Promise.resolve(),
    connected: true,
    close: () => Promise.resolve(),
  };
  const db = {
    query: async () => {
      loads += 1;
      return { rows };
    },
  } as unknown as Queryable;
  const notify = (payload: unknown) => handlers.get(ACCESS_REVOCATIONS_CHANNEL)!(typeof payload === 'string' ? payload : JSON.stringify(payload));
  return { listener, db, notify, loads: () => loads };
}

const logger = pino({ level: 'silent' });
const now = Date.now();
const hour = 3_600_000;

test('a revoked session ends its tokens only; other sessions of the account go on', (t) => {
  const { listener, db, notify } = fakes();
  const revocations = createAccessRevocations(db, listener, logger);
  notify({ session_id: 's1', account_id: null, revoked_at_ms: now, expires_at_ms: now + hour });
  t.true(revocations.ended({ accountId: 'a', sessionId: 's1', tokenEpoch: 0 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: 's2', tokenEpoch: 0 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: undefined, tokenEpoch: 0 }));
  revocations.close();
});

test('a lock ends the tokens of lower epochs whatever their iat says; an unlock does not lower it; a deletion ends every token', (t) => {
  const { listener, db, notify } = fakes();
  const revocations = createAccessRevocations(db, listener, logger);
  notify({ session_id: null, account_id: 'a', revoked_at_ms: now, expires_at_ms: now + hour, token_epoch: 2 });
  t.true(revocations.ended({ accountId: 'a', sessionId: undefined, tokenEpoch: 0 }));
  t.true(revocations.ended({ accountId: 'a', sessionId: 'any', tokenEpoch: 1 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: undefined, tokenEpoch: 2 }));
  t.false(revocations.ended({ accountId: 'b', sessionId: undefined, tokenEpoch: 0 }));
  // An older lock arriving late (a reload) keeps the higher epoch.
  notify({ session_id: null, account_id: 'a', revoked_at_ms: now - 1_000, expires_at_ms: now + hour, token_epoch: 1 });
  t.true(revocations.ended({ accountId: 'a', sessionId: undefined, tokenEpoch: 1 }));
  notify({ session_id: null, account_id: 'd', revoked_at_ms: now, expires_at_ms: now + hour, token_epoch: null });
  t.true(revocations.ended({ accountId: 'd', sessionId: undefined, tokenEpoch: Number.MAX_SAFE_INTEGER }));
  revocations.close();
});

test('load adds what the table holds; a notification it cannot read makes it reload', async (t) => {
  const { listener, db, notify, loads } = fakes([{ session_id: null, account_id: 'a', revoked_at_ms: now, expires_at_ms: now + hour, token_epoch: 1 }]);
  const revocations = createAccessRevocations(db, listener, logger);
  await revocations.load();
  t.true(revocations.ended({ accountId: 'a', sessionId: undefined, tokenEpoch: 0 }));
  const before = loads();
  notify('not json');
  notify({ session_id: null, account_id: null, revoked_at_ms: now, expires_at_ms: now });
  await new Promise((resolve) => setImmediate(resolve));
  t.true(loads() > before);
  revocations.close();
});
