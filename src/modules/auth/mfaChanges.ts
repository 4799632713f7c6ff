import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import type { AuditEvent } from '../../platform/audit.ts';
import { type Caller, actorRef, originOf } from '../../platform/caller.ts';
import { AuthError } from './errors.ts';
import { type SecondFactorInput, totpContext, useSecondFactor, useTotpCode } from './secondFactor.ts';
import { type Limited, type SignInDeps, afterAttempt } from './signIn.ts';
import { confirmTotp, deleteSecondFactor, findTotp, replaceRecoveryCodes, upsertPendingTotp } from './store/mfa.ts';
import { newRecoveryCodes, newTotpSecret, recoveryCodeHash } from './totp.ts';

const alreadyEnabled = () => new AuthError('mfa_already_enabled', 'Two-factor sign-in is already on; turn it off first.');
const notEnabled = () => new AuthError('mfa_not_enabled', 'Two-factor sign-in is not on.');
const invalidCode = () => new AuthError('invalid_code', 'The code is wrong or was already used.');

function changed(caller: Caller, action: string): AuditEvent {
  return {
    ...originOf(caller),
    action,
    actor: actorRef(caller.actor),
    resource: { type: 'account', id: caller.actor.id },
    outcome: 'success',
    metadata: {},
  };
}

/** Starts authenticator setup: a new seed, sealed at rest, pending until a code confirms it. */
export async function startTotp(deps: SignInDeps, { actor }: Caller): Promise<{ secret: string; otpauth_uri: string }> {
  if ((await findTotp(deps.pool, actor.id))?.confirmed) {
    throw alreadyEnabled();
  }
  const { secret, uri } = newTotpSecret(actor.label);
  if (!(await upsertPendingTotp(deps.pool, actor.id, deps.secrets.seal(secret, totpContext(actor.id))))) {
    throw alreadyEnabled();
  }
  return { secret, otpauth_uri: uri };
}

async function issueRecoveryCodes(tx: Queryable, accountId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(tx, accountId, codes.map(recoveryCodeHash));
  return codes;
}

/** Confirms setup with a current code: TOTP is on from now, and the first recovery codes are returned. */
export async function confirmTotpSetup(deps: SignInDeps, code: string, caller: Caller): Promise<Limited<{ recovery_codes: string[] }>> {
  const accountId = caller.actor.id;
  const headers = await spendMfaChange(deps, accountId);
  return afterAttempt(headers, () =>
    withTransaction(deps.pool, async (tx) => {
      const totp = await findTotp(tx, accountId);
      if (!totp) {
        throw new AuthError('mfa_setup_not_started', 'Start authenticator setup first (POST /auth/mfa/totp).');
      }
      if (totp.confirmed) {
        throw alreadyEnabled();
      }
      if (!(await useTotpCode(tx, deps.secrets, accountId, totp.sealed_secret, code)) || !(await confirmTotp(tx, accountId))) {
        throw invalidCode();
      }
      const codes = await issueRecoveryCodes(tx, accountId);
      await deps.recordAudit(tx, changed(caller, 'auth.mfa.totp.enabled'));
      return { recovery_codes: codes };
    }),
  );
}

async function spendMfaChange(deps: SignInDeps, accountId: string): Promise<Record<string, string>> {
  const attempt = await deps.attempts.spendMfaChange(accountId);
  if (!attempt.allowed) {
    throw attempt.refusal;
  }
  return attempt.headers;
}

/** A change to an enabled second factor, proven by a current code or a recovery code. */
async function changeEnabledFactor<T>(deps: SignInDeps, factor: SecondFactorInput, caller: Caller, change: (tx: Queryable) => Promise<T>): Promise<Limited<T>> {
  const accountId = caller.actor.id;
  const headers = await spendMfaChange(deps, accountId);
  return afterAttempt(headers, () =>
    withTransaction(deps.pool, async (tx) => {
      if (!(await findTotp(tx, accountId))?.confirmed) {
        throw notEnabled();
      }
      if (!(await useSecondFactor(tx, deps.secrets, accountId, factor))) {
        throw invalidCode();
      }
      return change(tx);
    }),
  );
}

export function disableTotp(deps: SignInDeps, factor: SecondFactorInput, caller: Caller): Promise<Limited<void>> {
  return changeEnabledFactor(deps, factor, caller, async (tx) => {
    await deleteSecondFactor(tx, caller.actor.id);
    await deps.recordAudit(tx, changed(caller, 'auth.mfa.totp.disabled'));
  });
}

/** New recovery codes replace every earlier one, used or not. */
export function regenerateRecoveryCodes(deps: SignInDeps, factor: SecondFactorInput, caller: Caller): Promise<Limited<{ recovery_codes: string[] }>> {
  return changeEnabledFactor(deps, factor, caller, async (tx) => {
    const codes = await issueRecoveryCodes(tx, caller.actor.id);
    await deps.recordAudit(tx, changed(caller, 'auth.mfa.recovery_codes.regenerated'));
    return { recovery_codes: codes };
  });
}
