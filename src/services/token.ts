// The token endpoint's protocol logic (RFC 6749 §3.2, §5): pick the grant handler, check the
// client may use it, hand it only the parameters it declares, return its response.
import type { AuthenticatedClient } from '../domain/types.js'
import type { GrantContext, GrantRegistry } from '../grants/registry.js'
import { OAuthError } from '../errors.js'
import { parameterLabel } from './input-limits.js'
import type { TokenResponse } from '../tokens/issuer.js'

export interface TokenService {
  exchange(auth: AuthenticatedClient, form: Record<string, string>, ctx: GrantContext): Promise<TokenResponse>
}

export function createTokenService(deps: { registry: GrantRegistry }): TokenService {
  return {
    async exchange(auth, form, ctx) {
      const grantType = form.grant_type
      if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required')
      const handler = deps.registry.get(grantType)
      if (!handler) throw new OAuthError('unsupported_grant_type')
      const { client } = auth
      if (!client.allowedGrantTypes.includes(grantType)) {
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
      return handler.handle(client, parsed.data, ctx)
    },
  }
}
