// The authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636 §4.3), validated in
// two stages, because where its errors go depends on how far it got (RFC 6749 §4.1.2.1):
// 1. the client and its redirect URI: until both are known to be the client's own, an error is a
//    page and never a redirect (no open redirector, RFC 9700 §4.11.1);
// 2. everything else: an error goes back to the redirect URI with error, state and iss.
import { isPublicClient } from '../domain/public-client.js'
import type { Client, ResolvedScopes } from '../domain/types.js'
import { isRegisteredRedirectUri } from '../domain/redirect-uri.js'
import { OAuthError } from '../errors.js'
import { parseAcrValues, type ParsedAcrValues } from '../grants/acr-values.js'
import type { IdentityProviderDirectory } from './identity-providers.js'
import type { Reauthentication } from './return-to.js'
import type { ScopeResolver } from '../grants/scopes.js'
import type { ClientStore } from '../stores/clients.js'
import { checkNoControlCharacters, ownEntry, parameterLabel } from '../domain/input-limits.js'
import { readDPoPJkt } from '../tokens/dpop.js'

export const AUTHORIZATION_CODE = 'authorization_code'

/** Parameters as they arrived (query or form), names possibly repeated. */
export type RawParams = Array<[string, string]>

export type ResponseMode = 'query' | 'form_post'

/** Where the response (or an error) goes, once stage 1 passed. */
export interface ResponseTarget {
  client: Client
  redirectUri: string
  state: string | undefined
  responseMode: ResponseMode
}

export interface AuthorizationRequest extends ResponseTarget {
  granted: ResolvedScopes
  nonce: string | undefined
  codeChallenge: string | undefined
  prompt: Set<'none' | 'login' | 'consent'>
  maxAge: number | undefined
  loginHint: string | undefined
  idTokenHint: string | undefined
  acr: ParsedAcrValues
  /** RFC 9449 §10: the thumbprint of the key the token request must prove (dpop_jkt). */
  dpopJkt?: string | undefined
  /** The parameters as a map (each once), to rebuild the request's URL. */
  params: Map<string, string>
}

/** Longest values accepted; anything longer is invalid_request (the request is anyone's). */
const LIMITS: Record<string, number> = {
  client_id: 200,
  redirect_uri: 400,
  state: 1000,
  nonce: 500,
  scope: 1000,
  code_challenge: 128,
  login_hint: 200,
  id_token_hint: 4000,
  acr_values: 300,
  resource: 512,
  prompt: 100,
  max_age: 10,
}
const DEFAULT_LIMIT = 200

/** RFC 7636 §4.2: BASE64URL(SHA-256(verifier)) is 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
const PROMPTS = new Set(['none', 'login', 'consent'])

const invalid = (d: string) => new OAuthError('invalid_request', d)

/** Each parameter once; the names that appeared more than once. */
export function collect(raw: RawParams): { params: Map<string, string>; repeated: string[] } {
  const params = new Map<string, string>()
  const repeated: string[] = []
  for (const [k, v] of raw) {
    if (params.has(k)) {
      if (!repeated.includes(k)) repeated.push(k)
      continue
    }
    if (v !== '') params.set(k, v) // RFC 6749 §3.1: an empty parameter is treated as omitted
  }
  return { params, repeated }
}

/**
 * Stage 1: the client and the redirect URI (exact string match, RFC 9700 §2.1; may be omitted
 * only when the client registered exactly one). Throws a page error: nothing here may redirect.
 */
export async function resolveTarget(clients: Pick<ClientStore, 'findById'>, raw: RawParams): Promise<ResponseTarget> {
  const { params, repeated } = collect(raw)
  const client = await resolveClient(clients, raw)
  if (repeated.includes('redirect_uri')) throw invalid('redirect_uri is repeated')
  const clientId = client.clientId
  const given = params.get('redirect_uri')
  // A mismatch is the commonest mistake in setting up a client: the page names what was sent, the
  // log line also what is registered (not the page: that is the client's configuration).
  const registered = { client_id: clientId, registered_redirect_uris: client.redirectUris }
  let redirectUri: string
  if (given === undefined) {
    if (client.redirectUris.length !== 1) throw new OAuthError('invalid_request', 'redirect_uri is missing', { logFields: registered })
    redirectUri = client.redirectUris[0]!
  } else {
    if (!isRegisteredRedirectUri(client.redirectUris, given)) {
      const sent = given.length > LIMITS.redirect_uri! ? `${given.slice(0, LIMITS.redirect_uri)}…` : given
      throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client', {
        pageDetail: { kind: 'redirect-uri-not-registered', sent },
        logFields: { ...registered, redirect_uri: sent },
      })
    }
    redirectUri = given
  }
  const mode = params.get('response_mode')
  return {
    client,
    redirectUri,
    state: repeated.includes('state') ? undefined : params.get('state'),
    responseMode: mode === 'form_post' ? 'form_post' : 'query',
  }
}

/** Stage 1's first half: the client named by client_id, known and enabled. Throws a page error. */
export async function resolveClient(clients: Pick<ClientStore, 'findById'>, raw: RawParams): Promise<Client> {
  const { params, repeated } = collect(raw)
  // Before anything reaches the database (a POSTed form is not checked at the edge).
  for (const [k, v] of raw) checkNoControlCharacters(v, parameterLabel(k))
  if (repeated.includes('client_id')) throw invalid('client_id is repeated')
  const clientId = params.get('client_id')
  if (clientId === undefined) throw invalid('client_id is missing')
  if (clientId.length > LIMITS.client_id!) throw invalid('client_id is unknown')
  const client = await clients.findById(clientId)
  if (!client || !client.enabled) throw invalid('client_id is unknown or the client is disabled')
  return client
}

/** Stage 2: everything else; every error goes back to the redirect URI. */
export async function validateRequest(
  target: ResponseTarget,
  raw: RawParams,
  scopes: ScopeResolver,
  providers: Pick<IdentityProviderDirectory, 'idpNames'>,
): Promise<AuthorizationRequest> {
  const { params, repeated } = collect(raw)
  const { client } = target
  if (repeated.length > 0) throw invalid(`${parameterLabel(repeated[0]!)} is repeated`)
  for (const [k, v] of params) {
    checkNoControlCharacters(v, parameterLabel(k))
    if (v.length > (ownEntry(LIMITS, k) ?? DEFAULT_LIMIT)) throw invalid(`${parameterLabel(k)} is too long`)
  }
  const mode = params.get('response_mode')
  if (mode !== undefined && mode !== 'query' && mode !== 'form_post') throw invalid('response_mode must be query or form_post')
  const responseType = params.get('response_type')
  if (responseType === undefined) throw invalid('response_type is missing')
  if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'response_type must be code')
  // RFC 9101 and RFC 9126 are resolved before (src/interaction/pushed-authorization.ts): what
  // arrives here with either is a request object inside a request object.
  if (params.has('request') || params.has('request_uri')) throw invalid('request and request_uri cannot be nested')
  if (!client.allowedGrantTypes.includes(AUTHORIZATION_CODE)) {
    throw new OAuthError('unauthorized_client', 'the client may not use the authorization code flow')
  }
  const granted = await scopes.resolve(client, params.get('scope'), { allowIdentity: true, resource: params.get('resource') })
  return {
    ...target,
    granted,
    nonce: params.get('nonce'),
    codeChallenge: pkce(client, params),
    prompt: prompt(params.get('prompt')),
    maxAge: maxAge(params.get('max_age')),
    loginHint: params.get('login_hint'),
    idTokenHint: params.get('id_token_hint'),
    acr: parseAcrValues(params.get('acr_values'), client, params.has('acr_values') ? await providers.idpNames(client) : undefined),
    dpopJkt: readDPoPJkt(params),
    params,
  }
}

/**
 * RFC 7636 §4.3, S256 only (RFC 9700 §2.1.1); required by requirePkce and for every public client,
 * whatever its requirePkce says (src/domain/public-client.ts).
 */
function pkce(client: Client, params: Map<string, string>): string | undefined {
  const challenge = params.get('code_challenge')
  const method = params.get('code_challenge_method')
  if (challenge === undefined) {
    if (method !== undefined) throw invalid('code_challenge_method without code_challenge')
    if (isPublicClient(client)) throw invalid('code_challenge is required: public clients must use PKCE with S256')
    if (client.requirePkce) throw invalid('code_challenge is required (PKCE with S256)')
    return undefined
  }
  // §4.3 defaults a missing method to plain, which we refuse like an explicit one.
  if (method !== 'S256') throw invalid('code_challenge_method must be S256')
  if (!S256_CHALLENGE.test(challenge)) throw invalid('code_challenge is not a S256 challenge')
  return challenge
}

function prompt(value: string | undefined): Set<'none' | 'login' | 'consent'> {
  const out = new Set<'none' | 'login' | 'consent'>()
  if (value === undefined) return out
  for (const p of value.split(' ')) {
    if (p === '') continue
    if (!PROMPTS.has(p)) throw invalid('prompt holds an unsupported value')
    out.add(p as 'none' | 'login' | 'consent')
  }
  // OIDC Core §3.1.2.1: none with any other value is an error.
  if (out.has('none') && out.size > 1) throw invalid('prompt none cannot be combined with other values')
  return out
}

/**
 * prompt=login and max_age of an authorization URL, for the sign-in it leads to; undefined when
 * it has neither. Values the endpoint refuses are ignored here (the endpoint answers them).
 */
export function reauthenticationOf(params: URLSearchParams): Reauthentication | undefined {
  const promptLogin = (params.get('prompt') ?? '').split(' ').includes('login')
  const age = params.get('max_age')
  const parsedAge = age !== null && /^\d{1,9}$/.test(age) ? Number(age) : undefined
  return promptLogin || parsedAge !== undefined ? { promptLogin, maxAge: parsedAge } : undefined
}

function maxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,9}$/.test(value)) throw invalid('max_age must be a non-negative integer')
  return Number(value)
}
