import { type CryptoKey, type JWK, importJWK } from 'jose';
import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import { followTable } from '../../platform/db/followTable.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import { sleep, withTimeout } from '../../platform/time.ts';
import { ALGORITHM, type SigningKey, loadSigningKey, openSigningKey, sealClearSigningKeys } from './signingKeys.ts';
import { selectVerifyingKeys } from './store/signingKeys.ts';

export const SIGNING_KEYS_CHANNEL = 'backplane_signing_keys';
/** The poll behind NOTIFY: an instance that missed a rotation signs with the old key at most this long. */
export const KEYS_RESYNC_MS = 60_000;
/** Tokens with kids this instance does not know share one reload, at most one a second. */
const UNKNOWN_KID_INTERVAL_MS = 1_000;
const LOAD_TIMEOUT_MS = 2_000;

export interface KeyRing {
  /** The key that signs now; its fields follow a rotation (read kid and privateKey in one step). */
  readonly signingKey: SigningKey;
  /** Public keys that verify now: the signing key and retired ones still in their overlap. */
  publicJwks(): JWK[];
  /** The public key of a token's kid; an unknown kid waits for a reload that starts after it came. */
  verificationKey(kid: string | undefined): Promise<CryptoKey | undefined>;
  reload(): Promise<void>;
  close(): void;
}

interface VerifyingKey {
  publicJwk: JWK;
  publicKey: CryptoKey;
  /** Local deadline from the database's count of seconds left; Infinity for the signing key. */
  untilMs: number;
}

const verifyingKey = async (publicJwk: JWK, untilMs: number): Promise<VerifyingKey> => ({
  publicJwk,
  publicKey: (await importJWK(publicJwk, ALGORITHM)) as CryptoKey,
  untilMs,
});

/** A key from APP_JWT_PRIVATE_KEY: it alone signs and verifies; rotating it is changing the variable. */
async function fixedRing(db: Queryable, pem: string, box: SecretBox): Promise<KeyRing> {
  const signingKey = await loadSigningKey(db, pem, box);
  const verifying = await verifyingKey(signingKey.publicJwk, Infinity);
  return {
    signingKey,
    publicJwks: () => [signingKey.publicJwk],
    verificationKey: async (kid) => (kid === signingKey.kid ? verifying.publicKey : undefined),
    reload: async () => undefined,
    close: () => undefined,
  };
}

/**
 * The database's keys in memory (ADR 0068): reloaded on NOTIFY from the table's trigger, on every
 * reconnect, every minute, and when a token names a kid not known here (a rotation whose NOTIFY
 * has not arrived yet), bounded to one query a second whatever kids a client makes up.
 */
export async function createKeyRing(options: {
  db: Queryable;
  listener: NotificationListener;
  logger: Logger;
  box: SecretBox;
  pem: string | undefined;
}): Promise<KeyRing> {
  const { db, box } = options;
  if (options.pem) {
    return fixedRing(db, options.pem, box);
  }
  let signing = await loadSigningKey(db, undefined, box);
  let verifying = new Map<string, VerifyingKey>([[signing.kid, await verifyingKey(signing.publicJwk, Infinity)]]);

  async function load(): Promise<void> {
    // A previous-release instance still running may have stored a key in clear.
    const rows = await withTimeout(
      sealClearSigningKeys(db, box).then(() => selectVerifyingKeys(db)),
      LOAD_TIMEOUT_MS,
    );
    const now = Date.now();
    const next = new Map<string, VerifyingKey>();
    for (const row of rows) {
      const untilMs = row.secondsLeft === null ? Infinity : now + row.secondsLeft * 1000;
      const known = verifying.get(row.kid);
      next.set(row.kid, known ? { ...known, untilMs } : await verifyingKey(row.publicJwk, untilMs));
      if (row.signing && row.sealedPrivateJwk && row.kid !== signing.kid) {
        signing = await openSigningKey({ kid: row.kid, sealedPrivateJwk: row.sealedPrivateJwk, publicJwk: row.publicJwk }, box);
      }
    }
    verifying = next;
  }
  const follower = followTable({
    listener: options.listener,
    channel: SIGNING_KEYS_CHANNEL,
    resyncMs: KEYS_RESYNC_MS,
    load,
    logger: options.logger,
    what: 'token signing keys',
  });

  let lastUnknownAt = 0;
  let pending: Promise<void> | undefined;
  function reloadForUnknownKid(): Promise<void> {
    // Joining a reload that has not started yet still sees every key committed before the token came.
    pending ??= sleep(Math.max(0, lastUnknownAt + UNKNOWN_KID_INTERVAL_MS - Date.now())).then(() => {
      lastUnknownAt = Date.now();
      pending = undefined;
      return follower.reload();
    });
    return pending;
  }

  const alive = (key: VerifyingKey | undefined) => (key && Date.now() < key.untilMs ? key : undefined);
  return {
    signingKey: {
      get kid() {
        return signing.kid;
      },
      get privateKey() {
        return signing.privateKey;
      },
      get publicJwk() {
        return signing.publicJwk;
      },
    },
    publicJwks: () => [...verifying.values()].filter((key) => alive(key)).map((key) => key.publicJwk),
    async verificationKey(kid) {
      if (!kid) {
        return undefined;
      }
      if (!verifying.has(kid)) {
        await reloadForUnknownKid();
      }
      return alive(verifying.get(kid))?.publicKey;
    },
    reload: follower.reload,
    close: follower.stop,
  };
}
