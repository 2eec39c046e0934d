// Plain domain types shared by services, grants and stores. camelCase inside the code;
// routes and stores convert to and from the wire and column names.

export type AccessTokenType = 'jwt' | 'reference'
export type RefreshTokenUsage = 'oneTimeOnly' | 'reUse'
export type RefreshTokenExpiration = 'absolute' | 'sliding'
/** OpenID CIBA Core 1.0 §5: how a client gets the outcome of a backchannel authentication request. */
export type BackchannelTokenDeliveryMode = 'poll' | 'ping' | 'push'

export interface Secret {
  /** base64(SHA-256(secret)) or base64(SHA-512(secret)); told apart by decoded length. */
  valueHash: string
  expiresAt: number | undefined // ms since epoch
  description?: string | undefined
  /**
   * The secret itself, kept only for a client_secret_jwt client (its HMAC key, RFC 7523 §2.2):
   * AES-256-GCM ciphertext when `encrypted` (KEY_ENCRYPTION_SECRET), else plain.
   */
  sealed?: { value: string; encrypted: boolean } | undefined
}

/** RFC 7591 §2 token_endpoint_auth_method: how a client authenticates (OIDC Core §9). */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none'

/** A set of requirements a client opts into with one seed field (src/domain/client-profile.ts). */
export type ClientProfile = 'fapi2'

export interface Client {
  clientId: string
  clientName: string | undefined
  enabled: boolean
  secrets: Secret[]
  requireClientSecret: boolean
  allowedGrantTypes: string[]
  allowedScopes: string[]
  redirectUris: string[]
  /** OpenID Connect RP-Initiated Logout 1.0 post_logout_redirect_uri values, matched exactly. */
  postLogoutRedirectUris: string[]
  requirePkce: boolean
  /** RFC 9449 (Duende's RequireDPoP): every token request needs a DPoP proof, so every access token is key-bound. */
  requireDPoP: boolean
  allowOfflineAccess: boolean
  accessTokenType: AccessTokenType
  /** Seconds; undefined means the server default (ACCESS_TOKEN_LIFETIME). */
  accessTokenLifetime: number | undefined
  refreshTokenUsage: RefreshTokenUsage
  refreshTokenExpiration: RefreshTokenExpiration
  absoluteRefreshTokenLifetime: number
  slidingRefreshTokenLifetime: number
  /** Seconds; undefined means CIBA_DEFAULT_LIFETIME. */
  cibaLifetime: number | undefined
  /** Seconds; undefined means CIBA_POLLING_INTERVAL. */
  pollingInterval: number | undefined
  /** The identity providers (schemes) it may use: sign-in buttons and acr_values `idp:` (all when empty, Duende's rule). */
  identityProviderRestrictions: string[]
  /** Duende's EnableLocalLogin: false hides the password form from its sign-ins. */
  enableLocalLogin: boolean
  /** Every sign-in for it needs a second factor or a passkey (src/interaction/authentication-level.ts). */
  requireMfa: boolean
  /** The only tenants it may name with acr_values `tenant:` (none when empty). */
  allowedTenants: string[]
  /** Origins whose pages may read the token, userinfo and revocation answers (CORS). */
  allowedCorsOrigins: string[]
  /** Token exchange (RFC 8693): the clients whose access tokens it may present as subject_token (none when empty). */
  allowedSubjectTokenClients: string[]
  /** Token exchange: the API resources (by name) it may obtain exchanged tokens for (none when empty). */
  allowedExchangeAudiences: string[]
  /** OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed (none when undefined). */
  backChannelLogoutUri: string | undefined
  /** §2.2 backchannel_logout_session_required: its logout tokens must carry sid. */
  backChannelLogoutSessionRequired: boolean
  requireConsent: boolean
  /** ID tokens carry the user's claims of the granted identity scopes; false: userinfo only (OIDC Core §5.4). */
  alwaysIncludeUserClaimsInIdToken: boolean
  /** The client's public keys (RFC 7591 `jwks`), for request objects and login_hint_tokens. */
  jwks: { keys: Record<string, unknown>[] } | undefined
  /** RFC 7591 jwks_uri: where its public keys are fetched from (instead of `jwks`). */
  jwksUri?: string | undefined
  /** The one authentication method it may use; undefined: a secret (Basic or body), or none when public. */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined
  /** CIBA Core §5 backchannel_token_delivery_mode: poll (the default), ping or push. */
  backchannelTokenDeliveryMode: BackchannelTokenDeliveryMode
  /** CIBA Core §5 backchannel_client_notification_endpoint: where pings and pushes are POSTed. */
  backchannelClientNotificationEndpoint: string | undefined
  /**
   * How the client came to be when not by the operator: Dynamic Client Registration (RFC 7591) or
   * a Client ID Metadata Document; undefined: the seed file, the CLI or the admin API.
   */
  selfRegistered: 'registration' | 'metadata-document' | undefined
  /** RFC 9126 §5 (Duende's RequirePushedAuthorization): its authorization requests must come through PAR. */
  requirePushedAuthorization: boolean
  /** RFC 9101 (Duende's RequireRequestObject): its authorization requests must be signed request objects. */
  requireRequestObject: boolean
  /** A profile whose requirements src/domain/client-profile.ts applies (fapi2: FAPI 2.0 Security Profile). */
  profile?: ClientProfile | undefined
}

/** An upstream OpenID Connect provider a person may sign in through (table identity_providers). */
export interface IdentityProvider {
  /** Its key: in URLs (/federation/{scheme}/…), in acr_values `idp:{scheme}`, in the `idp` claim. */
  scheme: string
  displayName: string
  type: 'oidc'
  /** The upstream issuer; its discovery document is {authority}/.well-known/openid-configuration. */
  authority: string
  clientId: string
  /** Plain, or ciphertext when `encrypted` (KEY_ENCRYPTION_SECRET); undefined: a PKCE-only public client. */
  clientSecret: { value: string; encrypted: boolean } | undefined
  /** Space-delimited. */
  scope: string
  enabled: boolean
  /** Home-realm discovery: an email address of one of these domains signs in here. */
  emailDomains: string[]
  /** Link an upstream identity to the local user with the same email, when the upstream says email_verified. */
  linkByVerifiedEmail: boolean
}

export interface ApiScope {
  name: string
  displayName: string | undefined
  description: string | undefined
  enabled: boolean
}

export interface ApiResource {
  /** Also the `aud` value of tokens for this API and its introspection user name. */
  name: string
  displayName: string | undefined
  enabled: boolean
  scopes: string[]
  secrets: Secret[]
}

export interface IdentityResource {
  name: string
  displayName: string | undefined
  /** Shown to the person on the decision screen. */
  description: string | undefined
  /** User claims emitted in ID tokens when this scope is granted. */
  claims: string[]
  enabled: boolean
}

export interface User {
  subjectId: string
  username: string
  /** scrypt hash in the form `scrypt$N$r$p$salt$hash` (base64url parts). */
  passwordHash: string | undefined
  enabled: boolean
  claims: Record<string, unknown>
  cibaUserCodeHash: string | undefined
  /** Every sign-in of the user needs a second factor or a passkey; undefined (a writer that does not set it): kept as stored, false for a new user. */
  requireMfa?: boolean | undefined
}

/** The kinds of handle kept in persisted_grants. */
export type GrantKind = 'authorization_code' | 'refresh_token' | 'reference_token' | 'device_code' | 'jwt_access_token'

export interface PersistedGrant {
  handleHash: string
  kind: GrantKind
  clientId: string
  subjectId: string | undefined
  familyId: string
  data: Record<string, unknown>
  createdAt: number
  expiresAt: number | undefined
  consumedAt: number | undefined
  /** What consume() recorded about the request that consumed it (the authorization code's redemption digest). */
  redemptionHash?: string | undefined
}

/** The person's decision on a polled request. */
export type CibaStatus = 'pending' | 'approved' | 'denied'

/**
 * What every request a client polls for has (CIBA's auth_req_id, the device flow's device_code):
 * the person's decision, the poll interval that slow_down grows, the grant family its tokens
 * join, and the times of its life. Times in ms since the epoch.
 */
export interface PolledRequest {
  id: string
  clientId: string
  requestedScopes: string[]
  status: CibaStatus
  approvedScopes: string[] | undefined
  authTime: number | undefined
  intervalSeconds: number
  lastPolledAt: number | undefined
  familyId: string
  createdAt: number
  expiresAt: number
  decidedAt: number | undefined
  consumedAt: number | undefined
}

/** OpenID CIBA Core 1.0 poll-mode request (table ciba_requests). */
export interface CibaRequest extends PolledRequest {
  /** The request id (in PolledRequest) is shown in the approval URL; the auth_req_id is stored only as a hash. */
  subjectId: string
  resources: string[]
  acrValues: string[]
  tenant: string | undefined
  /** The provider the request named (acr_values idp:): the approval's sign-in goes there. */
  idp: string | undefined
  bindingMessage: string | undefined
  /** Set at approval: how the approver signed in (undefined: approved before this was kept). */
  amr: string[] | undefined
  /** Set at approval: the provider the approver signed in through, or the request's idp: for a local sign-in. */
  signInIdp: string | undefined
  /** The client's delivery mode when the request was made (CIBA Core §5). */
  deliveryMode: BackchannelTokenDeliveryMode
}

/** How a person signed in, as a grant keeps it until its tokens are issued (src/grants/sign-in-record.ts). */
export interface SignInRecord {
  /** ms: when the person signed in (OIDC Core §2 auth_time). */
  authTime: number
  /** RFC 8176 authentication method references. */
  amr: string[]
  /** The scheme of the provider the sign-in went through, or what the request's acr_values idp: named; undefined: neither. */
  idp: string | undefined
}

/** RFC 8628 device authorization request (table device_authorizations). Times in ms since the epoch. */
export interface DeviceAuthorization extends PolledRequest {
  /** Set when the person decides (approved: who approved, how they signed in, and through which provider). */
  subjectId: string | undefined
  amr: string[] | undefined
  /** The scheme of the identity provider the approver signed in through; undefined: a local sign-in. */
  idp: string | undefined
}

/** What scope validation grants (src/grants/scopes.ts); what the token issuer puts in tokens. */
export interface ResolvedScopes {
  scopes: string[]
  apiScopes: string[]
  identityScopes: string[]
  offlineAccess: boolean
  /** Names of the API resources whose scopes were granted (the token's `aud`). */
  audiences: string[]
}

/** A client that authenticated at an endpoint (RFC 6749 §2.3). */
export interface AuthenticatedClient {
  client: Client
  method: TokenEndpointAuthMethod
  viaHeader: boolean
  /**
   * SHA-256 (base64) of the secret the client presented, '' for none: lets a grant tell a repeat
   * of the same authentication from another without keeping the secret. Never logged or stored.
   */
  credentialDigest: string
}

/** Who called the introspection endpoint (RFC 7662 §2.1): an API resource or a client. */
export type IntrospectionCaller = { kind: 'api'; name: string; scopes: readonly string[] } | { kind: 'client'; clientId: string }
