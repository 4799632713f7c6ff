import type { Queryable } from '../../platform/db/pool.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import { findTotp, useRecoveryCode, useTotpStep } from './store/mfa.ts';
import { recoveryCodeHash, totpStep } from './totp.ts';

/** A second factor as a client sends it: an authenticator code or one recovery code. */
export interface SecondFactorInput {
  code?: string | undefined;
  recovery_code?: string | undefined;
}

export const totpContext = (accountId: string) => `totp:${accountId}`;

/** Checks an authenticator code against the stored seed and spends its time step. */
export async function useTotpCode(tx: Queryable, secrets: SecretBox, accountId: string, sealedSecret: string, code: string): Promise<boolean> {
  const step = totpStep(secrets.open(sealedSecret, totpContext(accountId)), code);
  return step !== undefined && (await useTotpStep(tx, accountId, step));
}

/**
 * Verifies and spends a second factor of an account with TOTP on: the sign-in method it proves
 * (`otp` or `recovery`), or undefined when it is wrong, replayed or already used.
 */
export async function useSecondFactor(tx: Queryable, secrets: SecretBox, accountId: string, input: SecondFactorInput): Promise<'otp' | 'recovery' | undefined> {
  if (input.recovery_code !== undefined) {
    return (await useRecoveryCode(tx, accountId, recoveryCodeHash(input.recovery_code))) ? 'recovery' : undefined;
  }
  const totp = await findTotp(tx, accountId);
  if (!totp?.confirmed || input.code === undefined) {
    return undefined;
  }
  return (await useTotpCode(tx, secrets, accountId, totp.sealed_secret, input.code)) ? 'otp' : undefined;
}
