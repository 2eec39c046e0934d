// RFC 6749 §4.3 resource owner password credentials grant, for legacy and first-party clients
// only (RFC 9700 §2.4 says it MUST NOT be used; a client gets it only by listing `password`).
// The password is checked by the shared password check (per-user lockout, RFC 6749 §10.10), and
// every failure, whatever its reason (unknown user, disabled, wrong password, locked), gets the
// same invalid_grant (§5.2), so the answer tells nobody which usernames exist. A password alone
// is never enough where a second factor is needed (the person has one, or the client or the user
// requires one: src/interaction/authentication-level.ts): this grant has no way to ask for it, so
// it is refused, after the password check (the refusal says nothing about unchecked passwords).
import { z } from 'zod'
import type { Clock } from '../../../domain/clock.js'
import type { User } from '../../../domain/types.js'
import { OAuthError } from '../../../errors.js'
import type { TokenIssuer } from '../../../tokens/issuer.js'
import type { GrantHandler } from '../../../grants/registry.js'
import type { ScopeResolver } from '../../../grants/scopes.js'
import type { LevelCheck } from '../../../interaction/authentication-level.js'

/** The shared password check (src/interaction/password-check.ts), as this grant sees it. */
export interface PasswordVerifier {
  check(
    username: string,
    password: string,
    ctx: { address: string; clientId?: string; requestId?: string },
  ): Promise<{ ok: true; user: User } | { ok: false }>
}

const Params = z.object({
  username: z.string().min(1),
  password: z.string().min(1),
  scope: z.string().optional(),
  resource: z.string().optional(),
})
export type PasswordParams = z.infer<typeof Params>

/** OIDC Core §2 / RFC 8176 §2: the person proved a password. */
const AMR = ['pwd']

export function createPasswordGrant(deps: {
  clock: Clock
  passwords: PasswordVerifier
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
  /** What a password sign-in of the user, for the client, still needs (none: tokens may be issued). */
  levels?: LevelCheck | undefined
}): GrantHandler<PasswordParams> {
  return {
    grantType: 'password',
    params: Params,
    // §4.3.2: a client without credentials may use it; it still has to list the grant type.
    allowPublicClients: true,
    async handle(client, { username, password, scope, resource }, ctx) {
      // Scopes first: a request that cannot succeed costs no password check and no lockout count.
      const granted = await deps.scopes.resolve(client, scope, { allowIdentity: true, resource })
      const checked = await deps.passwords.check(username, password, {
        address: ctx.address,
        clientId: client.clientId,
        ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}),
      })
      if (!checked.ok) throw new OAuthError('invalid_grant', 'the username or password is incorrect')
      const { user } = checked
      if (deps.levels && (await deps.levels.next({ subjectId: user.subjectId, amr: AMR }, { client })) !== 'none')
        throw new OAuthError('invalid_grant', 'the user must sign in with a second factor, which this grant cannot ask for')
      const authTime = Math.floor(deps.clock.now() / 1000)
      return deps.tokenIssuer.issue({
        client,
        subjectId: user.subjectId,
        granted,
        claims: { auth_time: authTime, amr: AMR },
        idToken: { user, authTime, amr: AMR },
        // Issued only when offline_access was granted, which needs allowOfflineAccess.
        refreshToken: true,
        dpopJkt: ctx.dpop?.jkt,
      })
    },
  }
}
