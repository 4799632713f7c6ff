import type { AuthRouteDeps } from './routeDeps.ts';
import { z } from 'zod';
import { reply, routeDefiner } from '../../platform/http/route.ts';
import { confirmTotpSetup, disableTotp, regenerateRecoveryCodes, startTotp } from './mfaChanges.ts';
import { ONE_FACTOR, oneFactor, secondFactorFields } from './signInRoutes.ts';

const RecoveryCodes = z.object({ recovery_codes: z.array(z.string()).describe('Shown once; each works once') });
const FactorBody = z.object(secondFactorFields).refine(oneFactor, ONE_FACTOR);
const CHANGE_PROBLEMS = ['invalid_code', 'mfa_not_enabled', 'too_many_attempts', 'rate_limited'];

const defineRoute = routeDefiner<AuthRouteDeps>();

export const mfaRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/mfa/totp',
    auth: 'bearer',
    tag: 'auth',
    summary: 'Start authenticator (TOTP) setup: a secret and its otpauth URI',
    description: 'Pending until confirmed; starting again replaces a pending secret.',
    status: 201,
    responses: { 201: z.object({ secret: z.string(), otpauth_uri: z.string() }) },
    problems: ['mfa_already_enabled', 'rate_limited'],
    handler: ({ caller, deps }) => startTotp(deps.signIn, caller),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/mfa/totp/confirm',
    auth: 'bearer',
    tag: 'auth',
    summary: 'Turn two-factor sign-in on with a current code; returns recovery codes',
    body: z.object({ code: z.string().min(1).max(20) }),
    responses: { 200: RecoveryCodes },
    problems: ['invalid_code', 'mfa_setup_not_started', 'mfa_already_enabled', 'too_many_attempts', 'rate_limited'],
    handler: async ({ body, caller, deps }) => {
      const { result, headers } = await confirmTotpSetup(deps.signIn, body.code, caller);
      return reply(result, { headers });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/auth/mfa/totp',
    auth: 'bearer',
    tag: 'auth',
    summary: 'Turn two-factor sign-in off (a current code or a recovery code)',
    body: FactorBody,
    status: 204,
    responses: { 204: null },
    problems: CHANGE_PROBLEMS,
    handler: async ({ body, caller, deps }) => reply(undefined, { headers: (await disableTotp(deps.signIn, body, caller)).headers }),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/mfa/recovery-codes',
    auth: 'bearer',
    tag: 'auth',
    summary: 'Replace every recovery code (a current code or a recovery code)',
    body: FactorBody,
    responses: { 200: RecoveryCodes },
    problems: CHANGE_PROBLEMS,
    handler: async ({ body, caller, deps }) => {
      const { result, headers } = await regenerateRecoveryCodes(deps.signIn, body, caller);
      return reply(result, { headers });
    },
  }),
];
