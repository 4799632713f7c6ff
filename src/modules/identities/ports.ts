import type { RecordAudit } from '../../platform/audit.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import type { RequestOrigin } from '../../platform/caller.ts';

/** The body a successful sign-in answers with, the same as `POST /auth/sign-in`. */
export interface TokenBody {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Issued by the sign-in module's session store. */
  refresh_token: string;
}

export interface AccountRef {
  id: string;
  email: string;
}

/** Finishes a sign-in the provider vouched for: session, tokens, audit. Filled in by src/app/. */
export type CompleteSignIn = (tx: Queryable, account: AccountRef, methods: string[], origin: RequestOrigin) => Promise<TokenBody>;

/** The accounts this module creates, finds and deletes; the accounts table belongs to the auth module. */
export interface AccountsPort {
  findById(tx: Queryable, id: string): Promise<AccountRef | undefined>;
  findByEmail(tx: Queryable, email: string): Promise<AccountRef | undefined>;
  /** A new account without a password: it signs in through the provider. */
  create(tx: Queryable, email: string): Promise<AccountRef>;
  /** Locks the account row until the transaction ends; false when there is no such account. */
  lockForDeletion(tx: Queryable, id: string): Promise<boolean>;
  /** Deletes the account and everything that cascades from it (identities, roles, sessions). */
  delete(tx: Queryable, id: string): Promise<void>;
  /**
   * True while the sign-in that started a link has not ended (its session not signed out or
   * revoked, the account not locked or deleted since); holds it until the transaction ends.
   */
  holdSignIn(tx: Queryable, signIn: SignInRef): Promise<boolean>;
}

/** The sign-in behind a bearer token: its session (none for a `token issue` token) and token epoch. */
export interface SignInRef {
  accountId: string;
  sessionId: string | null;
  tokenEpoch: number;
}

/**
 * True when the account could still sign in without the given provider's identity: a password,
 * another identity, or any method the sign-in module adds. Runs in the unlink's transaction.
 */
export type CanStillSignIn = (tx: Queryable, accountId: string, without: { provider: string }) => Promise<boolean>;

/** Verifies the bearer token of a request that may carry one (linking); throws 401 when it is invalid. */
export type IdentifyCaller = (authorizationHeader: string) => Promise<AccountRef & SignInRef>;

export type RecordIdentityAudit = RecordAudit;
