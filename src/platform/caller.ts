/** Who is calling, as the bearer check established it. */
export interface Actor {
  /** Always an account: tokens are issued to accounts only. */
  kind: 'account';
  /** The account's id. */
  id: string;
  /** The account's email, as audit events show it. */
  label: string;
  /** Authentication methods of the token's sign-in (e.g. pwd, otp, cli). */
  methods: string[];
  /** The sign-in session the token came from, when it came from one (sign-out revokes it). */
  sessionId?: string | undefined;
}

/** Where a request came from, as audit events, sessions and history rows record it. */
export interface RequestOrigin {
  /** The request's id, answered in X-Request-Id and written in its log line. */
  requestId: string;
  /** The client's address, trusted proxies resolved. */
  clientAddress: string;
  /** The User-Agent header, as sent. */
  userAgent: string;
}

/** A signed-in caller of a use case: who, and from where. Use cases never see HTTP objects. */
export interface Caller extends RequestOrigin {
  /** Who signed in. */
  actor: Actor;
}

/** Only the origin fields of a caller, for history rows and audit events. */
export const originOf = (origin: RequestOrigin): RequestOrigin => ({
  requestId: origin.requestId,
  clientAddress: origin.clientAddress,
  userAgent: origin.userAgent,
});

/** The actor fields an audit event or a history row records. */
export const actorRef = (actor: Actor) => ({ kind: actor.kind, id: actor.id, label: actor.label });

/**
 * Who changes something and from where, as history rows and audit events record it: a signed-in
 * caller of the API, or an operator's command (`system:cli`, no request).
 */
export interface ChangedBy {
  actor: { kind: 'account' | 'system'; id: string; label: string };
  requestId?: string | undefined;
  clientAddress?: string | undefined;
  userAgent?: string | undefined;
}

export const changedBy = (caller: Caller): ChangedBy => ({ actor: actorRef(caller.actor), ...originOf(caller) });
