// RFC 6749 §4.1.3 authorization code grant with PKCE (RFC 7636 §4.5, §4.6) and OIDC Core §3.1.3.
// Checks that change nothing come first (unknown, another client's, expired, redirect_uri, PKCE:
// all invalid_grant, RFC 6749 §5.2); then the code is redeemed once through the one-time-use
// helper, so a second redemption answers invalid_grant and revokes every token issued from it
// (§4.1.2), and of concurrent redemptions exactly one succeeds. The only second use that revokes
// nothing is a true duplicate of the first request, moments later (CONCURRENT_REDEMPTION_MS).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { z } from 'zod'
import type { Clock } from '../../domain/clock.js'
import { isPublicClient, requiresPkce } from '../../domain/public-client.js'
import { OAuthError } from '../../errors.js'
import type { GrantStore } from '../../stores/grants.js'
import type { UserStore } from '../../stores/users.js'
import type { TokenIssuer } from '../../tokens/issuer.js'
import type { OneTimeUse } from '../../grants/one-time-use.js'
import type { GrantContext, GrantHandler } from '../../grants/registry.js'
import { narrowToResource, type ScopeResolver } from '../../grants/scopes.js'
import { issuedSignIn } from '../../grants/sign-in-record.js'
import { checkBoundKey } from '../../tokens/dpop.js'
import type { AuthorizationCodeData } from './service.js'

const Params = z.object({
  code: z.string().min(1).max(100),
  redirect_uri: z.string().min(1).max(400),
  code_verifier: z.string().optional(),
  resource: z.string().optional(),
})
export type AuthorizationCodeParams = z.infer<typeof Params>

const USED_AGAIN = 'authorization code already used'

/**
 * A redemption that loses to one made less than this long before (by the injected clock), with
 * the same client authentication, code_verifier and redirect_uri, is a duplicate of the same request
 * (a client library that runs its callback twice): invalid_grant without revoking, so that exactly
 * one of such concurrent redemptions gets tokens that work. Any other second use, inside the
 * window or not, revokes (RFC 6749 §4.1.2): when a thief redeemed a stolen code first, the real
 * client's redemption a moment later is exactly the use that must revoke what the thief got.
 */
export const CONCURRENT_REDEMPTION_MS = 2000
const concurrent = () => new OAuthError('invalid_grant', 'authorization code is being redeemed by another request')

/**
 * What identifies one redemption request: the client, how it authenticated (the method and a
 * digest of its secret), its code_verifier and its redirect_uri, as an HMAC keyed with the code
 * itself. Stored with the consumed code; the code is stored only as its hash, so a database dump
 * gives nothing to test guesses of the secret or the verifier against. Undefined when the
 * authentication is not known (a caller other than the token service): such a second use is
 * never taken for a duplicate.
 */
function redemptionDigest(clientId: string, params: AuthorizationCodeParams, ctx: GrantContext | undefined): string | undefined {
  const auth = ctx?.clientAuthentication
  if (auth === undefined) return undefined
  const request = [clientId, auth.method, auth.credentialDigest, params.code_verifier ?? null, params.redirect_uri]
  return createHmac('sha256', params.code).update(JSON.stringify(request)).digest('base64url')
}

/** A true duplicate: consumed moments ago by a request with the same digest. */
function isDuplicate(
  seen: { consumedAt?: number | undefined; redemptionHash?: string | undefined },
  digest: string | undefined,
  now: number,
): boolean {
  if (seen.consumedAt === undefined || now - seen.consumedAt >= CONCURRENT_REDEMPTION_MS) return false
  if (digest === undefined || seen.redemptionHash === undefined) return false
  const a = Buffer.from(seen.redemptionHash)
  const b = Buffer.from(digest)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** RFC 7636 §4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

const invalid = (d: string) => new OAuthError('invalid_grant', d)

/** RFC 7636 §4.6 with S256, and RFC 9700 §2.1.1: a verifier where no challenge was stored is refused. */
function checkPkce(challenge: string | undefined, verifier: string | undefined): void {
  if (challenge === undefined) {
    if (verifier !== undefined) throw invalid('code_verifier sent for a code issued without code_challenge')
    return
  }
  if (verifier === undefined) throw invalid('code_verifier is required for this code')
  if (!VERIFIER.test(verifier)) throw invalid('code_verifier is malformed')
  const computed = createHash('sha256').update(verifier).digest()
  const expected = Buffer.from(challenge, 'base64url')
  if (expected.length !== computed.length || !timingSafeEqual(expected, computed))
    throw invalid('code_verifier does not match code_challenge')
}

export function createAuthorizationCodeGrant(deps: {
  clock: Clock
  grants: Pick<GrantStore, 'find' | 'consume'>
  oneTimeUse: OneTimeUse
  users: Pick<UserStore, 'findBySubjectId'>
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
}): GrantHandler<AuthorizationCodeParams> {
  return {
    grantType: 'authorization_code',
    params: Params,
    // RFC 6749 §4.1.3: a public client identifies itself with client_id; it always used PKCE.
    allowPublicClients: true,
    async handle(client, params, ctx) {
      const now = deps.clock.now()
      const code = await deps.grants.find(params.code, 'authorization_code')
      if (!code || code.clientId !== client.clientId || code.subjectId === undefined) throw invalid('unknown authorization code')
      const digest = redemptionDigest(client.clientId, params, ctx)
      if (code.consumedAt !== undefined) {
        if (isDuplicate(code, digest, now)) throw concurrent()
        return deps.oneTimeUse.replayed(code.familyId, USED_AGAIN)
      }
      if (code.expiresAt !== undefined && code.expiresAt <= now) throw invalid('authorization code expired')
      const data = code.data as unknown as AuthorizationCodeData
      if (data.redirectUri !== params.redirect_uri) {
        throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request', {
          logFields: { redirect_uri: params.redirect_uri, authorization_redirect_uri: data.redirectUri },
        })
      }
      // A code issued without PKCE before the client became public (or began to require it) is refused.
      if (data.codeChallenge === undefined && requiresPkce(client)) {
        throw invalid(
          isPublicClient(client) ? 'public clients must use PKCE' : 'the client requires PKCE and the code was issued without it',
        )
      }
      checkPkce(data.codeChallenge, params.code_verifier)
      // RFC 8707 §2.2, checked before the code is spent: `resource` must be one the code covers.
      await narrowToResource(
        deps.scopes,
        client,
        await deps.scopes.resolve(client, data.scope, { allowIdentity: true, resource: data.resource }),
        params.resource,
      )
      // RFC 9449 §10: the authorization request named the key that must redeem the code.
      checkBoundKey(data.dpopJkt, ctx?.dpop, 'authorization code')
      const subjectId = code.subjectId
      return deps.oneTimeUse.redeem({
        familyId: code.familyId,
        consume: async () => {
          const won = await deps.grants.consume(params.code, 'authorization_code', now, digest)
          if (won) return won
          const seen = await deps.grants.find(params.code, 'authorization_code')
          if (seen && isDuplicate(seen, digest, now)) throw concurrent()
          return undefined // a second use: the helper revokes the family
        },
        usedAgain: USED_AGAIN,
        issue: async () => {
          const user = await deps.users.findBySubjectId(subjectId)
          if (!user || !user.enabled) throw invalid('the user is no longer active')
          // Revalidated: a scope the client lost since the authorization request is not issued.
          const granted = await deps.scopes.resolve(client, data.scope, { allowIdentity: true, resource: data.resource })
          const forToken = await narrowToResource(deps.scopes, client, granted, params.resource)
          const { authTime, amr, idpClaim } = issuedSignIn(data)
          const extra: Record<string, unknown> = { ...idpClaim }
          if (data.tenant !== undefined) extra.tenant = data.tenant
          return deps.tokenIssuer.issue({
            client,
            subjectId,
            granted: forToken,
            refreshGranted: granted,
            familyId: code.familyId,
            claims: { ...extra, auth_time: authTime, amr, acr: data.acr },
            idToken: {
              user,
              authTime,
              amr,
              acr: data.acr,
              extraClaims: { ...extra, sid: data.sid },
              ...(data.nonce !== undefined ? { nonce: data.nonce } : {}),
            },
            refreshToken: true,
            dpopJkt: ctx?.dpop?.jkt,
          })
        },
      })
    },
  }
}
