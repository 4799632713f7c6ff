import type pg from 'pg';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import type { AccountsPort, CanStillSignIn, CompleteSignIn, IdentifyCaller, RecordIdentityAudit } from './ports.ts';
import type { ProviderDirectory } from './providers.ts';

/** What the identity routes use; every port is filled in by src/app/. */
export interface IdentitiesDeps {
  pool: pg.Pool;
  providers: ProviderDirectory;
  /** Seals providers' refresh tokens under `identity:<provider>:<subject>`. */
  box: SecretBox;
  /** APP_PUBLIC_URL: the redirect URI is `${publicUrl}/auth/providers/{name}/callback`. */
  publicUrl: string;
  accounts: AccountsPort;
  completeSignIn: CompleteSignIn;
  canStillSignIn: CanStillSignIn;
  identifyCaller: IdentifyCaller;
  recordAudit: RecordIdentityAudit;
}

export const redirectUri = (deps: Pick<IdentitiesDeps, 'publicUrl'>, provider: string) => `${deps.publicUrl}/auth/providers/${provider}/callback`;

export const tokenContext = (provider: string, subject: string) => `identity:${provider}:${subject}`;
