// The client a stranger describes: by Dynamic Client Registration (RFC 7591 §2 metadata, the
// registration flow) or by a Client ID Metadata Document (metadata-document.ts). Both paths check
// the metadata their own way, then make the client here, so that what nobody chose (PKCE, consent
// every time, token formats and lifetimes, no CIBA, no token exchange) is one set of settings:
// the seed file's defaults (src/seed/schema.ts) where it has them, and the safer choice where a
// stranger is concerned (PKCE and consent always, refresh tokens one-time only).
import { isWebOrigin } from '../domain/origin.js'
import type { Client, Secret } from '../domain/types.js'

/** RFC 7591 §2 token_endpoint_auth_method values a self-registered client may have. */
export type SelfRegisteredAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'

/** The metadata a self-registered client is made of, checked by the path that read it. */
export interface SelfRegisteredMetadata {
  clientName: string | undefined
  authMethod: SelfRegisteredAuthMethod
  /** RFC 7591 grant_types as registered: refresh_token means offline access. */
  grantTypes: readonly string[]
  scopes: readonly string[]
  redirectUris: readonly string[]
  postLogoutRedirectUris: readonly string[]
  /** RFC 7591 §2 jwks (public keys only) or jwks_uri, for private_key_jwt; never both. */
  jwks?: { keys: Record<string, unknown>[] } | undefined
  jwksUri?: string | undefined
}

export interface SelfRegisteredOptions {
  /** Hashes of the secrets it was given (a client_secret_* registration). */
  secrets?: Secret[]
  /**
   * Whether it is a confidential client (RFC 6749 §2.1); by default, unless its method is none.
   * A metadata document's client is never one: nobody vouches for it.
   */
  confidential?: boolean
}

/**
 * The scopes of metadata without `scope`: all that such clients may have (REGISTRATION_ALLOWED_SCOPES),
 * offline_access only for a client with the refresh_token grant.
 */
export function defaultScopes(allowedScopes: readonly string[], grantTypes: readonly string[]): string[] {
  const offline = grantTypes.includes('refresh_token')
  return allowedScopes.filter((s) => offline || s !== 'offline_access')
}

/**
 * The origins of a public client's http(s) redirect URIs: its pages call the token endpoint
 * (CORS, src/http/cors.ts). A confidential client's secret never lives in a page, so it has none.
 */
function corsOrigins(redirectUris: readonly string[], confidential: boolean): string[] {
  if (confidential) return []
  const origins = redirectUris.filter((u) => /^https?:/i.test(u)).map((u) => new URL(u).origin)
  return [...new Set(origins)].filter(isWebOrigin)
}

/** A self-registered client: the person is asked for consent, PKCE always, only what its metadata says. */
export function selfRegisteredClient(
  clientId: string,
  how: NonNullable<Client['selfRegistered']>,
  m: SelfRegisteredMetadata,
  options: SelfRegisteredOptions = {},
): Client {
  const confidential = options.confidential ?? m.authMethod !== 'none'
  return {
    clientId,
    clientName: m.clientName,
    enabled: true,
    secrets: options.secrets ?? [],
    requireClientSecret: confidential,
    // Offline access is its own setting; refresh_token is no grant a client is given.
    allowedGrantTypes: m.grantTypes.filter((g) => g !== 'refresh_token'),
    allowedScopes: [...m.scopes],
    redirectUris: [...m.redirectUris],
    postLogoutRedirectUris: [...m.postLogoutRedirectUris],
    requirePkce: true,
    allowOfflineAccess: m.grantTypes.includes('refresh_token'),
    accessTokenType: 'jwt',
    accessTokenLifetime: undefined,
    refreshTokenUsage: 'oneTimeOnly',
    refreshTokenExpiration: 'absolute',
    absoluteRefreshTokenLifetime: 2_592_000,
    slidingRefreshTokenLifetime: 1_296_000,
    cibaLifetime: undefined,
    pollingInterval: undefined,
    identityProviderRestrictions: [],
    enableLocalLogin: true,
    allowedTenants: [],
    allowedCorsOrigins: corsOrigins(m.redirectUris, confidential),
    allowedSubjectTokenClients: [],
    allowedExchangeAudiences: [],
    backChannelLogoutUri: undefined,
    backChannelLogoutSessionRequired: true,
    requireConsent: true,
    alwaysIncludeUserClaimsInIdToken: true,
    jwks: m.jwks,
    jwksUri: m.jwksUri,
    // RFC 7591 §2: the method registered is the only one it may use (a private_key_jwt client
    // proves itself with the keys it registered, RFC 7523 §2.2).
    tokenEndpointAuthMethod: m.authMethod,
    backchannelTokenDeliveryMode: 'poll',
    backchannelClientNotificationEndpoint: undefined,
    requirePushedAuthorization: false,
    requireRequestObject: false,
    requireDPoP: false,
    requireMfa: false,
    selfRegistered: how,
  }
}
