// RFC 6749 §4.4 client credentials grant. Confidential clients only; never identity scopes or
// offline_access (no refresh token, §4.4.3). RFC 8707 resource; acr_values "tenant:<name>"
// becomes a `tenant` claim (Duende's convention).
import { z } from 'zod'
import { OAuthError } from '../errors.js'
import type { ScopeResolver } from '../services/scopes.js'
import type { TokenIssuer } from '../services/token-issuer.js'
import type { GrantHandler } from './registry.js'

const Params = z.object({
  scope: z.string().optional(),
  resource: z.string().optional(),
  acr_values: z.string().optional(),
})
export type ClientCredentialsParams = z.infer<typeof Params>

/** `tenant:<name>` from space-delimited acr_values, if any. */
export function tenantFromAcrValues(acrValues: string | undefined): string | undefined {
  if (acrValues === undefined) return undefined
  for (const v of acrValues.split(' ')) {
    if (v.startsWith('tenant:') && v.length > 7) return v.slice(7)
  }
  return undefined
}

export function createClientCredentialsGrant(deps: { scopes: ScopeResolver; tokens: TokenIssuer }): GrantHandler<ClientCredentialsParams> {
  return {
    grantType: 'client_credentials',
    params: Params,
    allowPublicClients: false,
    async handle(client, params) {
      if (!client.requireClientSecret) throw new OAuthError('unauthorized_client', 'public clients may not use client_credentials')
      const granted = await deps.scopes.resolve(client, params.scope, { allowIdentity: false, resource: params.resource })
      const tenant = tenantFromAcrValues(params.acr_values)
      return deps.tokens.issue(tenant === undefined ? { client, granted } : { client, granted, claims: { tenant } })
    },
  }
}
