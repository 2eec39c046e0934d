// RFC 6749 §4.4 client credentials grant. Confidential clients only; never identity scopes or
// offline_access (no refresh token, §4.4.3). RFC 8707 resource; acr_values "tenant:<name>"
// becomes a `tenant` claim (Duende's convention).
import { z } from 'zod'
import { OAuthError } from '../../../errors.js'
import { parseAcrValues } from '../../../grants/acr-values.js'
import type { ScopeResolver } from '../../../grants/scopes.js'
import type { TokenIssuer } from '../../../tokens/issuer.js'
import type { GrantHandler } from '../../../grants/registry.js'

const Params = z.object({
  scope: z.string().optional(),
  resource: z.string().optional(),
  acr_values: z.string().optional(),
})
export type ClientCredentialsParams = z.infer<typeof Params>

export function createClientCredentialsGrant(deps: {
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
}): GrantHandler<ClientCredentialsParams> {
  return {
    grantType: 'client_credentials',
    params: Params,
    allowPublicClients: false,
    async handle(client, params, ctx) {
      if (!client.requireClientSecret) throw new OAuthError('unauthorized_client', 'public clients may not use client_credentials')
      const granted = await deps.scopes.resolve(client, params.scope, { allowIdentity: false, resource: params.resource })
      const { tenant } = parseAcrValues(params.acr_values, client)
      const dpopJkt = ctx.dpop?.jkt
      return deps.tokenIssuer.issue(tenant === undefined ? { client, granted, dpopJkt } : { client, granted, claims: { tenant }, dpopJkt })
    },
  }
}
