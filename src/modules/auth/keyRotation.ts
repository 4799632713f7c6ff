import type { Queryable } from '../../platform/db/pool.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import { KEYS_RESYNC_MS } from './keyRing.ts';
import { loadSigningKey, newSealedSigningKey } from './signingKeys.ts';
import { deleteExpiredSigningKeys, insertSigningKey, lockSigningKeys, retireActiveSigningKey } from './store/signingKeys.ts';

/** The longest lifetime an access token gets: `token issue --ttl` at most (sign-in tokens live 15 minutes). */
export const LONGEST_TOKEN_TTL_SECONDS = 24 * 3600;

/**
 * How long a retired key keeps verifying: its last token's lifetime, plus the poll of an instance
 * that missed the NOTIFY and signed with it meanwhile, plus a margin for clocks.
 */
export const ROTATION_OVERLAP_SECONDS = LONGEST_TOKEN_TTL_SECONDS + KEYS_RESYNC_MS / 1000 + 4 * 60;

export interface Rotation {
  kid: string;
  retired: { kid: string; verifiesUntil: Date } | undefined;
  deleted: string[];
}

/**
 * `keys rotate`, in the caller's transaction: a new key signs from now on; the one it replaces
 * verifies for the overlap, without its private half. The box must open the current key first, so
 * a wrong APP_ENCRYPTION_KEY cannot seal a key the instances could not open.
 */
export async function rotateSigningKey(tx: Queryable, box: SecretBox): Promise<Rotation> {
  await lockSigningKeys(tx);
  const deleted = await deleteExpiredSigningKeys(tx);
  await loadSigningKey(tx, undefined, box);
  const retired = await retireActiveSigningKey(tx, ROTATION_OVERLAP_SECONDS);
  const next = await newSealedSigningKey(box);
  await insertSigningKey(tx, next);
  return { kid: next.kid, retired, deleted };
}
