// The checks of a seed client that name the client in their message or look at several of its
// fields: redirect URIs, CORS origins, the back-channel logout URI. They run even when another
// field of the client is invalid (each field is read only when it has the right type), so that
// one apply reports every problem of the file.
import type { z } from 'zod'
import { isWebOrigin } from '../domain/origin.js'
import { outboundUrlProblem } from '../domain/outbound-fetch.js'
import { isLocalHost, redirectUriProblem } from '../domain/redirect-uri.js'

/** Longer entries are the schema's problem (its max), not reported twice. */
export const REDIRECT_URI_MAX = 400

/**
 * Back-Channel Logout 1.0 §2.2: an absolute URI without a fragment, which SHOULD use https; http
 * is allowed for hosts that are this machine (development). The URI comes from the seed file (a
 * trusted administrator), so any host is accepted: docs/connect-an-app.md says what that means (SSRF).
 */
export function backChannelLogoutUriProblem(uri: string): string | undefined {
  return serverUriProblem('backChannelLogoutUri', uri)
}

/**
 * A URL the server POSTs to (a back-channel logout URI, a CIBA notification endpoint, CIBA Core
 * §5 "MUST be HTTPS"): absolute, https (http only for this machine), no fragment, no credentials.
 */
export function serverUriProblem(field: string, uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `${field} ${JSON.stringify(uri)} is not an absolute URL`
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLocalHost(url.hostname))) {
    return `${field} ${JSON.stringify(uri)} must use https (http only for localhost)`
  }
  if (uri.includes('#')) return `${field} ${JSON.stringify(uri)} must not contain a fragment (#)`
  if (url.username || url.password) return `${field} ${JSON.stringify(uri)} must not contain credentials`
  return undefined
}

/** The zod `when` of checkClient: any object, valid or not. */
export const isObject = (payload: { value: unknown }): boolean =>
  typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value)

/** `c` is the client as far as it parsed: any field may still hold the wrong type. */
export function checkClient(c: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const id = typeof c.clientId === 'string' ? c.clientId : '(without clientId)'
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message: `client ${id}: ${message}` })
  const strings = (v: unknown): [string, number][] =>
    Array.isArray(v) ? v.flatMap((s, i): [string, number][] => (typeof s === 'string' ? [[s, i]] : [])) : []

  for (const list of ['redirectUris', 'postLogoutRedirectUris']) {
    for (const [uri, i] of strings(c[list])) {
      const p = uri.length <= REDIRECT_URI_MAX ? redirectUriProblem(uri) : undefined
      if (p) problem([list, i], p)
    }
  }
  // RFC 6749 §4.1.1: the code goes back to a registered redirect URI; with none, no sign-in finishes.
  const grants = Array.isArray(c.allowedGrantTypes) ? c.allowedGrantTypes : []
  if (grants.includes('authorization_code') && Array.isArray(c.redirectUris) && c.redirectUris.length === 0) {
    problem(['redirectUris'], 'allowedGrantTypes has authorization_code, which needs at least one redirect URI')
  }
  if (typeof c.backChannelLogoutUri === 'string') {
    const p = backChannelLogoutUriProblem(c.backChannelLogoutUri)
    if (p) problem(['backChannelLogoutUri'], p)
  }
  checkAuthMethod(c, problem)
  // FAPI 2.0 Security Profile §5.3.2.1: confidential clients only, authenticated by private_key_jwt
  // (mTLS, its other method, is not offered).
  if (c.profile === 'fapi2') {
    if (c.requireClientSecret === false || c.tokenEndpointAuthMethod === 'none') {
      problem(['profile'], 'a fapi2 client must be confidential (FAPI 2.0 has no public clients): use tokenEndpointAuthMethod private_key_jwt')
    } else if (c.tokenEndpointAuthMethod !== 'private_key_jwt') {
      problem(['tokenEndpointAuthMethod'], 'a fapi2 client must use private_key_jwt (FAPI 2.0 Security Profile §5.3.2.1)')
    }
  }
  if (typeof c.backchannelClientNotificationEndpoint === 'string') {
    const p = serverUriProblem('backchannelClientNotificationEndpoint', c.backchannelClientNotificationEndpoint)
    if (p) problem(['backchannelClientNotificationEndpoint'], p)
  }
  // CIBA Core §5: ping and push deliver to the client's notification endpoint.
  const mode = c.backchannelTokenDeliveryMode
  if ((mode === 'ping' || mode === 'push') && c.backchannelClientNotificationEndpoint === undefined) {
    problem(['backchannelClientNotificationEndpoint'], `backchannelTokenDeliveryMode ${mode} needs a backchannelClientNotificationEndpoint`)
  }
  // CIBA Core §10.3: push mode POSTs the tokens to the client, with no request of the client's that
  // could carry a DPoP proof (RFC 9449 §5), so they are Bearer tokens: never for a client whose
  // tokens must be DPoP-bound.
  if (mode === 'push' && (c.requireDPoP === true || c.profile === 'fapi2')) {
    problem(
      ['backchannelTokenDeliveryMode'],
      'push delivers Bearer tokens, and this client must get DPoP-bound ones (requireDPoP or profile fapi2): use poll or ping',
    )
  }
  for (const [o, i] of strings(c.allowedCorsOrigins)) {
    if (!isWebOrigin(o)) {
      problem(
        ['allowedCorsOrigins', i],
        `${JSON.stringify(o)} is not an origin (scheme, host and optional port, as https://app.example.com: no path, no trailing slash)`,
      )
    }
  }
}

/**
 * RFC 7591 §2: jwks and jwks_uri exclude each other; private_key_jwt needs one of them;
 * client_secret_jwt needs the secret itself ("value"), for an HMAC cannot be checked with a hash.
 */
function checkAuthMethod(c: Record<string, unknown>, problem: (path: (string | number)[], message: string) => void): void {
  if (typeof c.jwksUri === 'string') {
    const p = outboundUrlProblem(c.jwksUri)
    if (p) problem(['jwksUri'], `jwksUri ${JSON.stringify(c.jwksUri)} ${p}`)
    if (c.jwks !== undefined) problem(['jwksUri'], 'give jwks or jwksUri, not both (RFC 7591 §2)')
  }
  const method = c.tokenEndpointAuthMethod
  if (method === 'private_key_jwt' && c.jwks === undefined && c.jwksUri === undefined) {
    problem(['tokenEndpointAuthMethod'], 'private_key_jwt needs the client\'s public keys: jwks or jwksUri')
  }
  if (method === 'client_secret_jwt' && Array.isArray(c.secrets)) {
    c.secrets.forEach((s: unknown, i) => {
      if (typeof s === 'object' && s !== null && 'sha256' in s) {
        problem(['secrets', i], 'client_secret_jwt needs the secret itself ("value"): an HMAC cannot be checked against a hash')
      }
    })
  }
  if (method === 'none' && c.requireClientSecret !== false) {
    problem(['tokenEndpointAuthMethod'], 'none is for a public client: set requireClientSecret to false')
  }
}
