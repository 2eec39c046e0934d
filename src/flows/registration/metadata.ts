// RFC 7591 §2: the client metadata a registration (or an RFC 7592 update) may carry, checked
// against the operator's policy. What is beyond it is refused, never trimmed to fit: a client
// that asked for more than it got would fail later, far from the cause. Unknown members are
// ignored (§2: "the authorization server MUST ignore any client metadata … that it does not
// understand"). Error descriptions name the member and never repeat the value.
import { createPublicKey } from 'node:crypto'
import { outboundUrlProblem } from '../../domain/outbound-fetch.js'
import { redirectUriProblem } from '../../domain/redirect-uri.js'
import { defaultScopes, type SelfRegisteredAuthMethod } from '../../client-auth/self-registered.js'
import { OAuthError } from '../../errors.js'
import { hasControlOrFormatCharacters } from '../../grants/acr-values.js'

export type AuthMethod = SelfRegisteredAuthMethod
const AUTH_METHODS: readonly string[] = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']
const GRANT_TYPES: readonly string[] = ['authorization_code', 'refresh_token', 'client_credentials']

/** The longest redirect URI, as for a seed client (src/seed/client-checks.ts). */
const URI_MAX = 400
const LIST_MAX = 20
const TEXT_MAX = 200
/** Keys in a registered jwks: enough for a rotation or two. */
const KEYS_MAX = 10
/** The JSON of a registered jwks (an RSA 4096 public key is under 1 KiB). */
const JWKS_MAX_CHARS = 16_384
/** RFC 7517 §6, RFC 8037 §2: the members that hold a private or symmetric key. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/** What the registration makes of the request: the client's settings and the metadata answered. */
export interface RegisteredMetadata {
  clientName: string | undefined
  authMethod: AuthMethod
  grantTypes: string[]
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  scopes: string[]
  /** RFC 7591 §2 jwks: the client's public keys by value (private_key_jwt, signed requests). */
  jwks: { keys: Record<string, unknown>[] } | undefined
  /** RFC 7591 §2 jwks_uri: where its public keys are fetched from. */
  jwksUri: string | undefined
  /** RFC 7591 §3.2.1: every member as registered, defaults filled in (wire names). */
  wire: Record<string, unknown>
}

export interface MetadataPolicy {
  allowedScopes: readonly string[]
}

const badMetadata = (description: string) => new OAuthError('invalid_client_metadata', description)
const badRedirect = (description: string) => new OAuthError('invalid_redirect_uri', description)

function optionalString(body: Record<string, unknown>, key: string, max = TEXT_MAX): string | undefined {
  const v = body[key]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || v.length === 0 || v.length > max || hasControlOrFormatCharacters(v)) {
    throw badMetadata(`${key} must be a non-empty string of at most ${max} characters without control characters`)
  }
  return v
}

function stringList(body: Record<string, unknown>, key: string, max = URI_MAX): string[] | undefined {
  const v = body[key]
  if (v === undefined) return undefined
  if (!Array.isArray(v) || v.length > LIST_MAX || !v.every((s) => typeof s === 'string' && s.length > 0 && s.length <= max)) {
    throw badMetadata(`${key} must be an array of at most ${LIST_MAX} non-empty strings`)
  }
  return [...new Set(v as string[])]
}

/** An https URL shown to people (client_uri, logo_uri, tos_uri, policy_uri). */
function webPage(body: Record<string, unknown>, key: string): string | undefined {
  const v = optionalString(body, key, URI_MAX)
  if (v === undefined) return undefined
  let url: URL | undefined
  try {
    url = new URL(v)
  } catch {
    url = undefined
  }
  if (url?.protocol !== 'https:' || url.username || url.password || v.includes('#')) {
    throw badMetadata(`${key} must be an https URL without credentials or fragment`)
  }
  return v
}

/**
 * RFC 8252 §7 and RFC 9700 §2.1: https; http only on a loopback IP address (any port, §7.3);
 * a private-use scheme only for a native application (§7.1). The rest of what a seed client's
 * redirect URI must be (src/domain/redirect-uri.ts) holds too.
 */
function redirectUri(uri: string, native: boolean, member: string): void {
  if (redirectUriProblem(uri) !== undefined) throw badRedirect(`${member} holds a URI that cannot be a redirect URI`)
  const scheme = uri.slice(0, uri.indexOf(':')).toLowerCase()
  if (scheme === 'https') return
  if (scheme === 'http') {
    const host = new URL(uri).hostname
    if (host === '127.0.0.1' || host === '[::1]') return
    throw badRedirect(`${member} holds an http URI that is not on a loopback address (127.0.0.1 or [::1])`)
  }
  if (!native) throw badRedirect(`${member} holds a private-use scheme, which needs application_type native`)
}

function scopes(body: Record<string, unknown>, policy: MetadataPolicy, grantTypes: string[]): string[] {
  const offline = grantTypes.includes('refresh_token')
  const v = body.scope
  if (v === undefined) return defaultScopes(policy.allowedScopes, grantTypes)
  if (typeof v !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(v) || v.length > 2000) {
    throw badMetadata('scope must be scope values separated by single spaces')
  }
  const asked = [...new Set(v.split(' '))]
  if (!asked.every((s) => policy.allowedScopes.includes(s))) throw badMetadata('scope holds a value that may not be registered')
  if (asked.includes('offline_access') && !offline) throw badMetadata('scope offline_access needs the refresh_token grant type')
  return asked
}

/**
 * RFC 7591 §2 jwks: a JWK Set (RFC 7517 §5) of public asymmetric keys. A private key member is
 * refused (the client would have published its secret), and so is a symmetric key: a key anyone
 * reading the registration could sign with. Every key must be one a verifier can use.
 */
function jwks(body: Record<string, unknown>): { keys: Record<string, unknown>[] } | undefined {
  const v = body.jwks
  if (v === undefined) return undefined
  const shape = 'jwks must be a JWK Set: an object whose keys member is an array of 1 to 10 public keys'
  if (typeof v !== 'object' || v === null || Array.isArray(v) || JSON.stringify(v).length > JWKS_MAX_CHARS) throw badMetadata(shape)
  const keys = (v as { keys?: unknown }).keys
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > KEYS_MAX) throw badMetadata(shape)
  for (const key of keys as unknown[]) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw badMetadata(shape)
    const k = key as Record<string, unknown>
    if (k.kty === 'oct') throw badMetadata('jwks must not hold a symmetric key (kty oct)')
    if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(k, m))) throw badMetadata('jwks must hold public keys only, without private key members')
    if (!['RSA', 'EC', 'OKP'].includes(k.kty as string)) throw badMetadata('jwks holds a key whose kty is not RSA, EC or OKP')
    try {
      createPublicKey({ key: k as import('node:crypto').JsonWebKey, format: 'jwk' })
    } catch {
      throw badMetadata('jwks holds a key that is not a valid public key')
    }
  }
  return { keys: keys as Record<string, unknown>[] }
}

/** RFC 7591 §2 jwks_uri: https (http only for this machine's names), as for any client (src/domain/outbound-fetch.ts). */
function jwksUri(body: Record<string, unknown>): string | undefined {
  const v = optionalString(body, 'jwks_uri', URI_MAX)
  if (v !== undefined && outboundUrlProblem(v) !== undefined) {
    throw badMetadata('jwks_uri must be an https URL without credentials or fragment (http only for localhost names)')
  }
  return v
}

/** Checks a registration request's metadata (RFC 7591 §2, §3.1) against the policy. */
export function readMetadata(body: unknown, policy: MetadataPolicy): RegisteredMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badMetadata('the request body must be a JSON object')
  const b = body as Record<string, unknown>
  const authMethod = optionalString(b, 'token_endpoint_auth_method') ?? 'client_secret_basic'
  if (!AUTH_METHODS.includes(authMethod))
    throw badMetadata('token_endpoint_auth_method must be none, client_secret_basic, client_secret_post or private_key_jwt')
  const confidential = authMethod !== 'none'
  // §2: "The jwks_uri and jwks parameters MUST NOT both be present in the same request".
  if (b.jwks !== undefined && b.jwks_uri !== undefined) throw badMetadata('jwks and jwks_uri must not both be given')
  const keys = jwks(b)
  const keysUri = jwksUri(b)
  if (authMethod === 'private_key_jwt' && keys === undefined && keysUri === undefined) {
    throw badMetadata('token_endpoint_auth_method private_key_jwt needs jwks or jwks_uri')
  }
  const grantTypes = stringList(b, 'grant_types') ?? ['authorization_code']
  if (grantTypes.length === 0 || !grantTypes.every((g) => GRANT_TYPES.includes(g))) {
    throw badMetadata('grant_types may hold only authorization_code, refresh_token and client_credentials')
  }
  if (grantTypes.includes('client_credentials') && !confidential)
    throw badMetadata('grant_types client_credentials needs a confidential client')
  if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code')) {
    throw badMetadata('grant_types refresh_token needs authorization_code')
  }
  const code = grantTypes.includes('authorization_code')
  const responseTypes = stringList(b, 'response_types') ?? (code ? ['code'] : [])
  if (!responseTypes.every((r) => r === 'code') || code !== responseTypes.includes('code')) {
    throw badMetadata('response_types must be code, with the authorization_code grant type')
  }
  const applicationType = optionalString(b, 'application_type') ?? 'web'
  if (applicationType !== 'web' && applicationType !== 'native') throw badMetadata('application_type must be web or native')
  const native = applicationType === 'native'
  const redirectUris = stringList(b, 'redirect_uris') ?? []
  if (code && redirectUris.length === 0) throw badRedirect('redirect_uris must hold at least one URI for the authorization_code grant type')
  for (const uri of redirectUris) redirectUri(uri, native, 'redirect_uris')
  const postLogoutRedirectUris = stringList(b, 'post_logout_redirect_uris') ?? []
  for (const uri of postLogoutRedirectUris) redirectUri(uri, native, 'post_logout_redirect_uris')
  const granted = scopes(b, policy, grantTypes)
  const clientName = optionalString(b, 'client_name')
  const contacts = stringList(b, 'contacts', TEXT_MAX)
  if (contacts?.some(hasControlOrFormatCharacters)) throw badMetadata('contacts must not contain control characters')
  const wire: Record<string, unknown> = {
    redirect_uris: redirectUris,
    token_endpoint_auth_method: authMethod,
    grant_types: grantTypes,
    response_types: responseTypes,
    application_type: applicationType,
    scope: granted.join(' '),
    ...(postLogoutRedirectUris.length > 0 ? { post_logout_redirect_uris: postLogoutRedirectUris } : {}),
    ...(clientName !== undefined ? { client_name: clientName } : {}),
    ...(contacts !== undefined ? { contacts } : {}),
    ...(keys !== undefined ? { jwks: keys } : {}),
    ...(keysUri !== undefined ? { jwks_uri: keysUri } : {}),
  }
  for (const key of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri']) {
    const v = webPage(b, key)
    if (v !== undefined) wire[key] = v
  }
  for (const key of ['software_id', 'software_version']) {
    const v = optionalString(b, key)
    if (v !== undefined) wire[key] = v
  }
  return {
    clientName,
    authMethod: authMethod as AuthMethod,
    grantTypes,
    redirectUris,
    postLogoutRedirectUris,
    scopes: granted,
    jwks: keys,
    jwksUri: keysUri,
    wire,
  }
}
