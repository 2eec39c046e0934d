// The token endpoint's protocol logic (RFC 6749 §3.2, §5): pick the grant handler, check the
// client may use it, hand it only the parameters it declares, return its response.
import type { AuthenticatedClient } from '../../domain/types.js'
import type { GrantContext, GrantRegistry } from '../../grants/registry.js'
import { OAuthError } from '../../errors.js'
import { parameterLabel } from '../../domain/input-limits.js'
import type { AuditSink } from '../../observe/audit.js'
import { ISSUED, type TokenResponse } from '../../tokens/issuer.js'

export interface TokenService {
  exchange(auth: AuthenticatedClient, form: Record<string, string>, ctx: GrantContext): Promise<TokenResponse>
}

/** The kinds of token a response carries, as audit events and metrics name them. */
export function issuedTokenTypes(res: TokenResponse): string[] {
  const types = ['access_token']
  if (res.refresh_token !== undefined) types.push('refresh_token')
  if (res.id_token !== undefined) types.push('id_token')
  return types
}

export function createTokenService(deps: { registry: GrantRegistry; audit?: AuditSink }): TokenService {
  return {
    async exchange(auth, form, ctx) {
      const grantType = form.grant_type
      if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required')
      const handler = deps.registry.get(grantType)
      if (!handler) throw new OAuthError('unsupported_grant_type')
      const { client } = auth
      // RFC 9449 §5 (Duende's RequireDPoP): such a client's every token is bound to its key.
      if (client.requireDPoP && ctx.dpop === undefined)
        throw new OAuthError('invalid_dpop_proof', 'a DPoP proof is required for this client')
      // Refresh tokens are permitted by allowOfflineAccess with offline_access (as in Duende), not by
      // allowedGrantTypes: a client that was given one may use it; the grant checks the rest.
      if (grantType !== 'refresh_token' && !client.allowedGrantTypes.includes(grantType)) {
        throw new OAuthError('unauthorized_client', 'the client may not use this grant type')
      }
      if (auth.method === 'none' && !handler.allowPublicClients) {
        throw new OAuthError('unauthorized_client', 'public clients may not use this grant type')
      }
      // zod objects drop keys the handler does not declare.
      const parsed = handler.params.safeParse(form)
      if (!parsed.success) {
        const key = parsed.error.issues[0]?.path[0]
        throw new OAuthError('invalid_request', `${typeof key === 'string' ? parameterLabel(key) : 'a parameter'} is missing or invalid`)
      }
      const clientAuthentication = { method: auth.method, credentialDigest: auth.credentialDigest }
      const res = await handler.handle(client, parsed.data, { ...ctx, clientAuthentication })
      // A grant that ignored the proof issued bearer tokens the client asked to have bound: none leave.
      if (ctx.dpop !== undefined && res.token_type !== 'DPoP') {
        throw new OAuthError('server_error', undefined, {
          logFields: { grant_type: grantType, reason: 'the grant did not bind its tokens to the DPoP key' },
        })
      }
      // Every grant, built-in or extension, is audited here, once: the issuer marked what it issued.
      deps.audit?.emit({
        event: 'token.issued',
        clientId: client.clientId,
        subject: res[ISSUED]?.subject,
        grantType,
        address: ctx.address,
        requestId: ctx.requestId,
        scope: res.scope,
        tokenTypes: issuedTokenTypes(res),
        accessTokenFormat: res[ISSUED]?.accessTokenFormat,
      })
      return res
    },
  }
}
