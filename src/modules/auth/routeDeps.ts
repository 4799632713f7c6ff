import type { AccountOps } from './accountOps.ts';
import type { KeyRing } from './keyRing.ts';
import type { RoleChanges } from './roleChanges.ts';
import type { SignInDeps } from './signIn.ts';

/** What the auth module's route handlers receive. */
export interface AuthRouteDeps {
  signIn: SignInDeps;
  roles: RoleChanges;
  accounts: AccountOps;
  keys: Pick<KeyRing, 'publicJwks'>;
}
