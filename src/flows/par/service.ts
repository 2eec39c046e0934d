// Pushed authorization requests (RFC 9126 §2): the client, authenticated as at the token
// endpoint, sends its authorization request here first and gets a request_uri that stands for it
// at the authorization endpoint. The request is validated exactly as the authorization endpoint
// would (src/interaction/authorization-request.ts), so that a bad one is refused to the client
// here, never shown to a person. A request object (`request`, RFC 9101) carries the parameters
// inside; then every other form parameter but client authentication's is ignored (§3). A DPoP
// proof that came with the push stands for dpop_jkt (RFC 9449 §10.1).
import type { Client } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import type { ScopeResolver } from '../../grants/scopes.js'
import { resolveTarget, validateRequest, type RawParams } from '../../interaction/authorization-request.js'
import type { IdentityProviderDirectory } from '../../interaction/identity-providers.js'
import {
  checkRequestOrigin,
  CLIENT_AUTH_PARAMS,
  PUSHED_REQUEST_LIFETIME_SECONDS,
  type AuthorizationInputs,
} from '../../interaction/pushed-authorization.js'
import type { RequestObjectVerifier } from '../../interaction/request-object.js'
import type { ClientStore } from '../../stores/clients.js'
import type { DPoPProof } from '../../tokens/dpop.js'

export interface PushedAuthorizationDeps {
  clients: Pick<ClientStore, 'findById'>
  scopes: ScopeResolver
  providers: Pick<IdentityProviderDirectory, 'idpNames'>
  requestObjects: RequestObjectVerifier
  inputs: Pick<AuthorizationInputs, 'hold'>
}

/** RFC 9126 §2.2: the success response. */
export interface PushedAuthorizationResponse {
  request_uri: string
  expires_in: number
}

export interface PushedAuthorizationService {
  /** `dpop`: the request's checked DPoP proof, when it carried one. */
  push(client: Client, form: Record<string, string>, dpop?: DPoPProof): Promise<PushedAuthorizationResponse>
}

export function createPushedAuthorizationService(deps: PushedAuthorizationDeps): PushedAuthorizationService {
  return {
    async push(client, form, dpop) {
      // §2.1: request_uri is not allowed here.
      if (form.request_uri !== undefined) throw new OAuthError('invalid_request', 'request_uri is not allowed at this endpoint')
      const signed = form.request !== undefined
      const params: RawParams = signed
        ? await deps.requestObjects.verify(client, form.request!)
        : Object.entries(form).filter(([k]) => !CLIENT_AUTH_PARAMS.includes(k))
      // The authenticated client is the one the request is for (client_id inside a request object included).
      if (!signed && form.client_id !== undefined && form.client_id !== client.clientId) {
        throw new OAuthError('invalid_request', 'client_id does not match the authenticated client')
      }
      if (!signed && form.client_id === undefined) params.push(['client_id', client.clientId])
      if (dpop) bindToProof(params, dpop)
      const target = await resolveTarget(deps.clients, params)
      const origin = { viaPar: true, signed }
      checkRequestOrigin(client, origin, false)
      await validateRequest(target, params, deps.scopes, deps.providers)
      const requestUri = await deps.inputs.hold(client, params, origin)
      return { request_uri: requestUri, expires_in: PUSHED_REQUEST_LIFETIME_SECONDS }
    },
  }
}

/**
 * RFC 9449 §10.1: the proof's key binds the code as dpop_jkt does; a dpop_jkt that names another
 * key is refused.
 */
function bindToProof(params: RawParams, dpop: DPoPProof): void {
  const named = params.filter(([name]) => name === 'dpop_jkt')
  if (named.length === 0) params.push(['dpop_jkt', dpop.jkt])
  else if (named.some(([, value]) => value !== dpop.jkt))
    throw new OAuthError('invalid_dpop_proof', 'dpop_jkt does not match the key of the DPoP proof')
}
