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
  t.true(revocations.ended({ accountId: 'a', sessionId: 's1', issuedAtMs: now - 1_000 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: 's2', issuedAtMs: now - 1_000 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: undefined, issuedAtMs: now - 1_000 }));
  revocations.close();
});

test('a deleted or locked account ends tokens issued before it (and just after), not those issued later', (t) => {
  const { listener, db, notify } = fakes();
  const revocations = createAccessRevocations(db, listener, logger);
  notify({ session_id: null, account_id: 'a', revoked_at_ms: now, expires_at_ms: now + hour });
  t.true(revocations.ended({ accountId: 'a', sessionId: undefined, issuedAtMs: now - 60_000 }));
  t.true(revocations.ended({ accountId: 'a', sessionId: 'any', issuedAtMs: now + 1_000 }));
  t.false(revocations.ended({ accountId: 'a', sessionId: undefined, issuedAtMs: now + 5_000 }));
  t.false(revocations.ended({ accountId: 'b', sessionId: undefined, issuedAtMs: now - 60_000 }));
  revocations.close();
});

test('load adds what the table holds; a notification it cannot read makes it reload', async (t) => {
  const { listener, db, notify, loads } = fakes([{ session_id: null, account_id: 'a', revoked_at_ms: now, expires_at_ms: now + hour }]);
  const revocations = createAccessRevocations(db, listener, logger);
  await revocations.load();
  t.true(revocations.ended({ accountId: 'a', sessionId: undefined, issuedAtMs: now - 1_000 }));
  const before = loads();
  notify('not json');
  notify({ session_id: null, account_id: null, revoked_at_ms: now, expires_at_ms: now });
  await new Promise((resolve) => setImmediate(resolve));
  t.true(loads() > before);
  revocations.close();
});
