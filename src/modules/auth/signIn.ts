import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { type RequestOrigin, originOf } from '../../platform/caller.ts';
import { withHeaders } from '../../platform/errors.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import type { AuditEvent, RecordAudit } from '../../platform/audit.ts';
import { AuthError } from './errors.ts';
import { newOpaqueToken, tokenHash } from './opaqueTokens.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { type SecondFactorInput, useSecondFactor } from './secondFactor.ts';
import { type SessionDeps, type SignedIn, completeSignIn } from './sessions.ts';
import { normalizeEmail } from './email.ts';
import { findAccountByEmail } from './store/accounts.ts';
import { claimChallengeAttempt, findOpenChallenge, findTotp, insertChallenge, useChallenge } from './store/mfa.ts';

export const CHALLENGE_TTL_SECONDS = 5 * 60;
/** Second-factor attempts one challenge allows; then it is dead and the user signs in again (ADR 0065). */
export const CHALLENGE_ATTEMPTS = 5;
export const SECOND_FACTOR_METHODS = ['totp', 'recovery_code'];

/**
 * One attempt spent: the RateLimit header fields to answer with, or the refusal to throw (429 when
 * the client is over its budget, 503 when no instance could decide).
 */
export type Attempt = { allowed: true; headers: Record<string, string> } | { allowed: false; refusal: Error; overLimit: boolean };

/** The shared attempt budgets, a port filled in by src/app/ with the rate limiter. */
export interface AttemptLimits {
  /** One sign-in attempt (password or second factor) for this email (normalizeEmail's key): from the client's network, then from any (ADR 0065). */
  spendSignIn(email: string, origin: RequestOrigin): Promise<Attempt>;
  /** One two-factor change attempt (confirm, disable, new recovery codes) of this account. */
  spendMfaChange(accountId: string): Promise<Attempt>;
}

/** What a use case that spent an attempt returns: its result, and the RateLimit fields of the answer. */
export interface Limited<T> {
  result: T;
  headers: Record<string, string>;
}

/** Runs the rest of a use case that spent an attempt: its answer, refusals included, carries the attempt's RateLimit fields. */
export async function afterAttempt<T>(headers: Record<string, string>, work: () => Promise<T>): Promise<Limited<T>> {
  try {
    return { result: await work(), headers };
  } catch (error) {
    throw withHeaders(error, headers);
  }
}

export interface SignInDeps extends SessionDeps {
  pool: pg.Pool;
  secrets: SecretBox;
  attempts: AttemptLimits;
  recordAudit: RecordAudit;
}

export interface Challenge {
  challenge_token: string;
  methods: string[];
  expires_in: number;
}

// Unknown emails are checked against this hash, so they cost the same argon2 work as a wrong password.
let dummyHash: Promise<string> | undefined;
const unknownAccountHash = () => (dummyHash ??= hashPassword(randomBytes(16).toString('base64url')));

const invalidCredentials = () => new AuthError('invalid_credentials', 'The email or password is wrong.');
const invalidChallenge = () => new AuthError('invalid_challenge', 'The challenge token is unknown, expired, used or out of attempts; sign in again.');
const accountLocked = () => new AuthError('account_locked', 'The account is locked; an operator can unlock it.');

function failure(origin: RequestOrigin, reason: string, account: { id: string; email: string } | undefined, email: string): AuditEvent {
  return {
    ...originOf(origin),
    action: 'auth.sign_in.failed',
    actor: account ? { kind: 'account', id: account.id, label: account.email } : { kind: 'anonymous', label: email.slice(0, 254) },
    ...(account ? { resource: { type: 'account' as const, id: account.id } } : {}),
    outcome: reason === 'rate_limited' ? 'denied' : 'failure',
    metadata: { reason },
  };
}

/** Spends a sign-in attempt; a refusal for being over the budget is audited before it is answered. */
async function spendSignInAttempt(deps: SignInDeps, email: string, account: { id: string; email: string } | undefined, origin: RequestOrigin) {
  const attempt = await deps.attempts.spendSignIn(email, origin);
  if (!attempt.allowed) {
    if (attempt.overLimit) {
      await deps.recordAudit(deps.pool, failure(origin, 'rate_limited', account, email));
    }
    throw attempt.refusal;
  }
  return attempt.headers;
}

async function signedIn(
  deps: SignInDeps,
  account: { id: string; email: string },
  methods: string[],
  origin: RequestOrigin,
  work?: (tx: Queryable) => Promise<boolean>,
) {
  return withTransaction(deps.pool, async (tx) => {
    if (work && !(await work(tx))) {
      return undefined;
    }
    const tokens = await completeSignIn(tx, deps, account, methods, origin);
    await deps.recordAudit(tx, {
      ...originOf(origin),
      action: 'auth.sign_in.succeeded',
      actor: { kind: 'account', id: account.id, label: account.email },
      resource: { type: 'account', id: account.id },
      outcome: 'success',
      metadata: { methods },
    });
    return tokens;
  });
}

/**
 * Password sign-in. The attempt is spent before the password is checked, so a flood costs no
 * argon2 work; an account with TOTP gets a single-use challenge for the second step instead of tokens.
 */
export async function signInWithPassword(
  deps: SignInDeps,
  input: { email: string; password: string },
  origin: RequestOrigin,
): Promise<Limited<SignedIn | Challenge>> {
  // The budget's key is the account's key: every spelling that finds the account spends its budget (ADR 0063).
  const email = normalizeEmail(input.email);
  const headers = await spendSignInAttempt(deps, email, undefined, origin);
  return afterAttempt(headers, async (): Promise<SignedIn | Challenge> => {
    const account = await findAccountByEmail(deps.pool, email);
    const valid = await verifyPassword(account?.passwordHash ?? (await unknownAccountHash()), input.password);
    if (!account || !account.passwordHash || !valid) {
      await deps.recordAudit(deps.pool, failure(origin, 'invalid_credentials', account, email));
      throw invalidCredentials();
    }
    if (account.lockedAt) {
      await deps.recordAudit(deps.pool, failure(origin, 'account_locked', account, email));
      throw accountLocked();
    }
    if ((await findTotp(deps.pool, account.id))?.confirmed) {
      const challengeToken = newOpaqueToken();
      await insertChallenge(deps.pool, account.id, tokenHash(challengeToken), CHALLENGE_TTL_SECONDS);
      return { challenge_token: challengeToken, methods: SECOND_FACTOR_METHODS, expires_in: CHALLENGE_TTL_SECONDS };
    }
    return (await signedIn(deps, account, ['pwd'], origin))!;
  });
}

/** The second step: a challenge from the password step and an authenticator or recovery code. */
export async function signInWithSecondFactor(
  deps: SignInDeps,
  input: SecondFactorInput & { challenge_token: string },
  origin: RequestOrigin,
): Promise<Limited<SignedIn>> {
  const challenge = await findOpenChallenge(deps.pool, tokenHash(input.challenge_token), CHALLENGE_ATTEMPTS);
  if (!challenge) {
    throw invalidChallenge();
  }
  const account = { id: challenge.account_id, email: challenge.email };
  // Second-factor attempts count against the same budgets as passwords.
  const headers = await spendSignInAttempt(deps, challenge.email_normalized, account, origin);
  return afterAttempt(headers, async () => {
    // Claimed before the code is checked and kept whatever follows: the challenge's own cap.
    if (!(await claimChallengeAttempt(deps.pool, challenge.id, CHALLENGE_ATTEMPTS))) {
      throw invalidChallenge();
    }
    const tokens = await signedIn(deps, account, ['pwd', input.recovery_code === undefined ? 'otp' : 'recovery'], origin, async (tx) => {
      const method = await useSecondFactor(tx, deps.secrets, account.id, input);
      if (method && !(await useChallenge(tx, challenge.id))) {
        throw invalidChallenge();
      }
      return method !== undefined;
    });
    if (!tokens) {
      await deps.recordAudit(deps.pool, failure(origin, 'invalid_code', account, challenge.email));
      throw new AuthError('invalid_mfa', 'The second factor is wrong or was already used.');
    }
    return tokens;
  });
}
