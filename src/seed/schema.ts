// The seed file (docs/seed-file.md, a public contract): field names follow Duende IdentityServer's,
// camelCased. Every object is strict: an unknown field (a typo) is an error, never silently ignored.
import { z } from 'zod'
import { ACR_VALUE_MAX, hasControlOrFormatCharacters } from '../grants/acr-values.js'
import { isLocalHost } from '../domain/redirect-uri.js'
import { CLIENT_PROFILES } from '../domain/client-profile.js'
import { isAdminScope } from '../domain/admin-scopes.js'
import { checkClient, isObject, REDIRECT_URI_MAX } from './client-checks.js'

const name = z.string().min(1).max(200).regex(/^\S+$/, 'must not contain whitespace')

// RFC 3339 date-time with offset, or a plain date (midnight UTC).
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

/** Grant types the server knows by name; extension grants are absolute URIs (RFC 6749 §4.5). */
export const KNOWN_GRANT_TYPES = [
  'client_credentials',
  'password',
  'authorization_code',
  'refresh_token',
  'urn:openid:params:grant-type:ciba',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
] as const
const GRANT_TYPE = new RegExp(`^(${KNOWN_GRANT_TYPES.map((g) => g.replace(/[.:-]/g, '\\$&')).join('|')}|[a-z][a-z0-9+.-]*:\\S+)$`)

/** OpenID Connect Core §5.4: the claims each standard scope requests. */
export const STANDARD_IDENTITY_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub'],
  profile: [
    'name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username', 'profile',
    'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
  offline_access: [],
}

const secret = z
  .strictObject({
    value: z.string().min(1).optional().describe('the plain secret; stored only as base64(SHA-256)'),
    sha256: z
      .string()
      .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be base64 of a 32-byte SHA-256 digest')
      .optional()
      .describe('base64(SHA-256(secret)), already hashed'),
    expiration: z.string().regex(ISO_DATE, 'must be an ISO 8601 date or date-time').optional(),
    description: z.string().max(500).optional(),
  })
  .refine((s) => (s.value === undefined) !== (s.sha256 === undefined), { message: 'needs exactly one of "value" or "sha256"' })

const secrets = z.array(secret).describe('omitted: existing secrets are kept; present: exactly this set')

// RFC 7591 jwks: public keys only. Symmetric keys are refused: secrets are stored hashed.
const jwk = z
  .looseObject({ kty: z.enum(['RSA', 'EC', 'OKP']), kid: z.string().min(1).optional() })
  .refine((k) => !('d' in k), { message: 'must be a public key (has a private "d" member)' })

const seconds = z.number().int().positive()

// RFC 6749 §3.1.2: compared with the request as an exact string. What it may be is checked with the
// client (checkClient), so that the message names the client.
const redirectUri = z.string().max(REDIRECT_URI_MAX)
const REDIRECT_URI_RULE =
  'https, http only for localhost, 127.0.0.1 or [::1], or a native app\'s private-use scheme such as com.example.app:/callback (RFC 8252 §7); no fragment'

export const SeedClient = z.strictObject({
  clientId: z.string().min(1).max(200),
  clientName: z.string().max(200).optional(),
  secrets: secrets.optional(),
  allowedGrantTypes: z.array(z.string().regex(GRANT_TYPE, `must be one of ${KNOWN_GRANT_TYPES.join(', ')} or an absolute URI`)).default([]),
  allowedScopes: z.array(name).default([]),
  requireClientSecret: z.boolean().default(true),
  accessTokenType: z.enum(['jwt', 'reference']).default('jwt'),
  accessTokenLifetime: seconds.optional(),
  redirectUris: z
    .array(redirectUri)
    .default([])
    .describe(`authorization code flow (then required): the exact redirect_uri values allowed; ${REDIRECT_URI_RULE}`),
  postLogoutRedirectUris: z
    .array(redirectUri)
    .default([])
    .describe(`RP-initiated logout: the exact post_logout_redirect_uri values allowed; ${REDIRECT_URI_RULE}`),
  requirePkce: z.boolean().default(true),
  requireDPoP: z
    .boolean()
    .default(false)
    .describe('every token request must carry a DPoP proof (RFC 9449), so its access tokens are bound to the key; without one: invalid_dpop_proof'),
  allowOfflineAccess: z.boolean().default(false),
  refreshTokenUsage: z.enum(['oneTimeOnly', 'reUse']).default('oneTimeOnly'),
  refreshTokenExpiration: z.enum(['absolute', 'sliding']).default('absolute'),
  absoluteRefreshTokenLifetime: z.number().int().min(0).default(2592000),
  slidingRefreshTokenLifetime: z.number().int().min(0).default(1296000),
  cibaLifetime: seconds.optional(),
  pollingInterval: seconds.optional(),
  identityProviderRestrictions: z
    .array(z.string().min(1))
    .default([])
    .describe('the identity providers (schemes) the client may use: sign-in buttons and acr_values idp:<scheme>; empty: all of them'),
  enableLocalLogin: z
    .boolean()
    .default(true)
    .describe('false: no password form on its sign-in page; with exactly one provider, its sign-ins go straight to it'),
  requireMfa: z
    .boolean()
    .default(false)
    .describe('every sign-in for the client needs a second factor or a passkey; a person without one is led to set one up'),
  allowedTenants: z
    .array(
      z.string().min(1).max(ACR_VALUE_MAX).regex(/^\S+$/, 'must not contain whitespace')
        .refine((s) => !hasControlOrFormatCharacters(s), 'must not contain control or format characters'),
    )
    .default([])
    .describe('the tenants the client may name with acr_values tenant:<name> (the tenant claim of its tokens); empty: none'),
  allowedCorsOrigins: z
    .array(z.string())
    .default([])
    .describe('origins (scheme, host, optional port) whose pages may call the token, userinfo and revocation endpoints'),
  allowedSubjectTokenClients: z
    .array(name)
    .default([])
    .describe('token exchange: the clients whose access tokens this client may present as subject_token (list itself for its own); empty: none'),
  allowedExchangeAudiences: z
    .array(name)
    .default([])
    .describe('token exchange: the API resources (by name) this client may obtain exchanged tokens for; empty: none'),
  backChannelLogoutUri: z
    .string()
    .max(2000)
    .optional()
    .describe('OpenID Connect Back-Channel Logout: where logout tokens are POSTed when a session the client took part in ends (https; http only for localhost)'),
  backChannelLogoutSessionRequired: z
    .boolean()
    .default(true)
    .describe('the client needs the sid claim in its logout tokens (ours always carry it)'),
  requireConsent: z.boolean().default(false),
  alwaysIncludeUserClaimsInIdToken: z
    .boolean()
    .default(true)
    .describe("ID tokens carry the user's claims of the granted identity scopes; false: only userinfo does, the ID token has the protocol claims"),
  enabled: z.boolean().default(true),
  jwks: z.strictObject({ keys: z.array(jwk) }).optional(),
  jwksUri: z
    .string()
    .max(2000)
    .optional()
    .describe('RFC 7591 jwks_uri: where the client publishes its public keys, instead of jwks (https; http only for localhost names)'),
  tokenEndpointAuthMethod: z
    .enum(['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'])
    .optional()
    .describe(
      'RFC 7591: the one way the client authenticates; omitted: a secret by Basic or in the body, or none when requireClientSecret is false',
    ),
  backchannelTokenDeliveryMode: z
    .enum(['poll', 'ping', 'push'])
    .default('poll')
    .describe('CIBA: poll (the client asks the token endpoint), ping (it is told when to ask) or push (Bearer tokens are POSTed to it; not with requireDPoP or profile fapi2)'),
  backchannelClientNotificationEndpoint: z
    .string()
    .max(2000)
    .optional()
    .describe('CIBA ping and push: where the notification is POSTed (https; http only for localhost); required for those modes'),
  selfRegistered: z
    .enum(['registration', 'metadata-document'])
    .optional()
    .describe('set by the server for a client that registered itself (RFC 7591) or described itself in a metadata document; omitted: a client of the operator'),
  requirePushedAuthorization: z
    .boolean()
    .default(false)
    .describe('its authorization requests must come through the pushed authorization request endpoint (RFC 9126); others are refused with invalid_request'),
  requireRequestObject: z
    .boolean()
    .default(false)
    .describe('its authorization requests must be request objects signed with a key of its jwks (RFC 9101), by value or pushed; others are refused with invalid_request'),
  profile: z
    .enum(CLIENT_PROFILES)
    .optional()
    .describe(
      'fapi2: the FAPI 2.0 Security Profile (PAR, PKCE S256, DPoP for every grant, codes of at most 60 s, ES256/PS256 only); needs tokenEndpointAuthMethod private_key_jwt',
    ),
}).superRefine((c, ctx) => checkClient(c, ctx), { when: isObject })

// Where a person's browser is sent and where the upstream's documents come from: https, http
// only for this machine (as backChannelLogoutUri).
const AUTHORITY_RULE = 'https (http only for localhost, *.localhost, 127.0.0.1 and [::1]), no query, fragment or credentials'

/** OpenID Connect Discovery 1.0 §4: the issuer of an upstream, whose metadata is read from it. */
export function authorityProblem(uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'is not an absolute URL'
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLocalHost(url.hostname))) return `must use ${AUTHORITY_RULE}`
  if (url.search || url.hash || uri.includes('#') || url.username || url.password) return `must use ${AUTHORITY_RULE}`
  return undefined
}

const EMAIL_DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/

export const SeedIdentityProvider = z.strictObject({
  scheme: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'must be 1 to 50 lowercase letters, digits, "-" or "_", starting with a letter or digit')
    .refine((s) => s !== 'local', '"local" is reserved (acr_values idp:local means the password form)')
    .describe('its key: in {ISSUER}/federation/{scheme}/signin, acr_values idp:{scheme} and the idp claim'),
  displayName: z
    .string()
    .min(1)
    .max(100)
    .refine((s) => !hasControlOrFormatCharacters(s), 'must not contain control or format characters')
    .describe('the name on its sign-in button'),
  type: z.literal('oidc', { error: (i) => `${JSON.stringify(i.input)} is not a supported type: "oidc" is the only one` }),
  authority: z
    .string()
    .max(400)
    .superRefine((s, ctx) => {
      const p = authorityProblem(s)
      if (p) ctx.addIssue({ code: 'custom', message: p })
    })
    .describe(`the upstream issuer; its discovery document is {authority}/.well-known/openid-configuration; ${AUTHORITY_RULE}`),
  clientId: z.string().min(1).max(400),
  clientSecret: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .describe('encrypted at rest with KEY_ENCRYPTION_SECRET when set; omitted: a public client (PKCE only)'),
  scope: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'must be scope values separated by single spaces')
    .refine((s) => s.split(' ').includes('openid'), 'must include openid')
    .default('openid profile email'),
  enabled: z.boolean().default(true),
  emailDomains: z
    .array(z.string().transform((d) => d.toLowerCase()).pipe(z.string().regex(EMAIL_DOMAIN, 'must be a domain name such as example.com')))
    .default([])
    .describe('home-realm discovery: an email address of one of these domains typed on the sign-in page goes to this provider'),
  linkByVerifiedEmail: z
    .boolean()
    .default(false)
    .describe('a first sign-in whose email the upstream says is verified links to the local user with that email'),
})

export const SeedUser = z.strictObject({
  subjectId: z.string().min(1).max(200),
  username: z.string().min(1).max(200),
  password: z.string().min(1).optional().describe('hashed with scrypt; omitted: an existing password is kept'),
  enabled: z.boolean().default(true),
  cibaUserCode: z.string().min(1).optional().describe('hashed like a password; omitted: an existing code is kept'),
  claims: z.record(z.string(), z.unknown()).default({}),
  requireMfa: z
    .boolean()
    .default(false)
    .describe('every sign-in of the user needs a second factor or a passkey; without one they are led to set one up'),
})

export const SeedApiScope = z.strictObject({
  // The admin API's scopes are built in and never granted by default (src/domain/admin-scopes.ts):
  // an api scope of that name would be granted to a client that lists it and asks for no scope
  // (src/grants/scopes.ts), and could give admin tokens an API resource's audience.
  name: name.refine((n) => !isAdminScope(n), '"authz:admin" and "authz:admin:read" are the admin API\'s built-in scopes, never an api scope'),
  displayName: z.string().optional(),
  description: z.string().optional(),
  enabled: z.boolean().default(true),
})

export const SeedApiResource = z.strictObject({
  name: z.string().min(1).max(200),
  displayName: z.string().optional(),
  enabled: z.boolean().default(true),
  scopes: z.array(name).default([]),
  secrets: secrets.optional(),
})

export const SeedIdentityResource = z.strictObject({
  name,
  displayName: z.string().optional(),
  description: z.string().optional(),
  claims: z.array(z.string().min(1)).optional(),
  enabled: z.boolean().default(true),
})

export const SeedFile = z.strictObject({
  $schema: z.string().optional(),
  apiScopes: z.array(SeedApiScope).default([]),
  apiResources: z.array(SeedApiResource).default([]),
  identityResources: z
    .array(
      z.union([name, SeedIdentityResource], {
        error: 'must be a scope name or an object {name, displayName, description, claims, enabled}',
      }),
    )
    .default([]),
  clients: z.array(SeedClient).default([]),
  users: z.array(SeedUser).default([]),
  identityProviders: z.array(SeedIdentityProvider).default([]),
})

export type SeedInput = z.infer<typeof SeedFile>

/** The JSON Schema printed by `authz seed --schema` (what an editor validates against). */
export function seedJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(SeedFile, { io: 'input' })
}
