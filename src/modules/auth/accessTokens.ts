import { randomUUID } from 'node:crypto';
import { type CryptoKey, type JWK, type JWSHeaderParameters, SignJWT, createLocalJWKSet, errors, jwtVerify } from 'jose';
import { ALGORITHM, type SigningKey } from './signingKeys.ts';

export const ISSUER = 'backplane';

export interface AccessTokenClaims {
  accountId: string;
  email: string;
  /** How the sign-in was made: pwd, otp, recovery, cli, provider name... */
  methods: string[];
  /** The session (refresh token family member) the token came from; absent for CLI tokens. */
  sessionId?: string | undefined;
  /** The account's token epoch when issued (claim `ep`): a lock raises it, ending older tokens (ADR 0064). */
  tokenEpoch?: number | undefined;
}

/** The claims of a checked token, with when it was issued (iat: whole seconds; 0 when absent). */
export interface VerifiedClaims extends AccessTokenClaims {
  issuedAtMs: number;
  /** 0 for a token issued before epochs existed. */
  tokenEpoch: number;
}

export interface IssuedToken {
  token: string;
  expiresIn: number;
}

export async function issueAccessToken(key: SigningKey, claims: AccessTokenClaims, ttlSeconds: number): Promise<IssuedToken> {
  const token = await new SignJWT({
    email: claims.email,
    amr: claims.methods,
    ...(claims.sessionId ? { sid: claims.sessionId } : {}),
    ep: claims.tokenEpoch ?? 0,
  })
    .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setSubject(claims.accountId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(key.privateKey);
  return { token, expiresIn: ttlSeconds };
}

export type VerifyFailure = 'expired' | 'invalid';

/** A kid no key answers to fails like a bad signature: 401, never 500. */
const keyLookup = (find: (kid: string | undefined) => Promise<CryptoKey | undefined>) => async (header: JWSHeaderParameters) => {
  const key = await find(header.kid);
  if (!key) {
    throw new errors.JWKSNoMatchingKey();
  }
  return key;
};

/** Verifies signature (EdDSA only: no `none`, no HMAC), issuer and expiry. */
/** Tokens whose signature was checked, kept until they expire: a token is immutable, so reuse is safe. */
const VERIFIED_CACHE_SIZE = 10_000;

/** Fixed public keys, or a lookup by the token's kid (the key ring: keys follow a rotation). */
export type VerificationKeys = JWK[] | ((kid: string | undefined) => Promise<CryptoKey | undefined>);

export function createTokenVerifier(keys: VerificationKeys) {
  const keySet = Array.isArray(keys) ? createLocalJWKSet({ keys }) : keyLookup(keys);
  const verified = new Map<string, { claims: VerifiedClaims; expiresAtMs: number }>();
  return async function verifyAccessToken(token: string): Promise<VerifiedClaims | VerifyFailure> {
    const known = verified.get(token);
    if (known) {
      if (Date.now() < known.expiresAtMs) {
        return known.claims;
      }
      verified.delete(token);
      return 'expired';
    }
    try {
      const { payload } = await jwtVerify(token, keySet, { algorithms: [ALGORITHM], issuer: ISSUER, typ: 'at+jwt' });
      if (typeof payload.sub !== 'string' || !Array.isArray(payload.amr) || typeof payload.exp !== 'number') {
        return 'invalid';
      }
      const claims: VerifiedClaims = {
        accountId: payload.sub,
        email: String(payload.email ?? ''),
        methods: payload.amr.map(String),
        sessionId: typeof payload.sid === 'string' ? payload.sid : undefined,
        issuedAtMs: typeof payload.iat === 'number' ? payload.iat * 1000 : 0,
        tokenEpoch: Number.isSafeInteger(payload.ep) ? (payload.ep as number) : 0,
      };
      if (verified.size >= VERIFIED_CACHE_SIZE) {
        verified.clear();
      }
      verified.set(token, { claims, expiresAtMs: payload.exp * 1000 });
      return claims;
    } catch (error) {
      return error instanceof errors.JWTExpired ? 'expired' : 'invalid';
    }
  };
}
