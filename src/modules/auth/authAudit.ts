import type { Queryable } from '../../platform/db/pool.ts';
import { type RequestInfo, requestOrigin } from '../../platform/http/route.ts';

/** An audit event of sign-in, sessions and two-factor changes. Never a password, code or token. */
export interface AuthAuditEvent {
  action:
    | 'auth.sign_in.succeeded'
    | 'auth.sign_in.failed'
    | 'auth.session.reuse_detected'
    | 'auth.signed_out'
    | 'auth.mfa.totp.enabled'
    | 'auth.mfa.totp.disabled'
    | 'auth.mfa.recovery_codes.regenerated';
  actor: { kind: 'account' | 'anonymous'; id?: string; label?: string };
  resource?: { type: 'account'; id: string };
  outcome: 'success' | 'failure' | 'denied';
  requestId: string;
  clientAddress: string;
  userAgent: string;
  metadata: Record<string, unknown>;
}

/** The audit trail, a port filled in by src/app/: pass the transaction of the change. */
export type RecordAuthAudit = (db: Queryable, event: AuthAuditEvent) => Promise<void>;

export const requestContext = (request: RequestInfo) => ({
  ...requestOrigin(request),
});
