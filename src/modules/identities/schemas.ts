import { z } from 'zod';
import { PROVIDER_NAME } from './providerConfig.ts';

export const ProviderParams = z.object({
  provider: z
    .string()
    .regex(PROVIDER_NAME, 'must be a provider name: lowercase letters, digits, - or _')
    .meta({ examples: ['corporate-sso'] }),
});

// Loose: providers add parameters of their own (iss, session_state, scope...), and openid-client checks them.
export const CallbackQuery = z.looseObject({
  // Any text: a state that is not of the form the service makes is 401 invalid_state in the callback.
  state: z.string().min(1).max(512),
  // RFC 6749: a code is printable ASCII (VSCHAR).
  code: z
    .string()
    .regex(/^[\x20-\x7e]{1,4096}$/, 'must be 1-4096 printable ASCII characters')
    .optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
});

export const TokenBody = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Seconds until the access token expires'),
  refresh_token: z.string().optional().describe('Present once the sign-in module keeps sessions'),
});
