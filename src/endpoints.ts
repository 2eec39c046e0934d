// Every path this server answers, in one place: the routes register them, discovery publishes
// them, the pages link to them, and nothing else spells them out.

// OpenID Connect Discovery 1.0 §4 and RFC 8414 §3: the metadata documents; the JWKS (RFC 7517 §5).
export const DISCOVERY_PATH = '/.well-known/openid-configuration'
export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server'
export const JWKS_PATH = '/.well-known/openid-configuration/jwks'

// The OAuth endpoints a client or an API calls.
export const TOKEN_PATH = '/connect/token' // RFC 6749 §3.2
export const INTROSPECTION_PATH = '/connect/introspect' // RFC 7662 §2
export const REVOCATION_PATH = '/connect/revocation' // RFC 7009 §2
export const CIBA_PATH = '/connect/ciba' // OpenID CIBA Core 1.0 §7
export const DEVICE_AUTHORIZATION_PATH = '/connect/deviceauthorization' // RFC 8628 §3.1
export const USERINFO_PATH = '/connect/userinfo' // OpenID Connect Core 1.0 §5.3
export const REGISTRATION_PATH = '/connect/register' // RFC 7591 §3
export const REGISTRATION_CLIENT_PATH = '/connect/register/:clientId' // RFC 7592 §2: the registration_client_uri
export const PAR_PATH = '/connect/par' // RFC 9126 §2

// The endpoints a browser is sent to, and the pages a person uses.
export const HOME_PATH = '/' // the landing page: what this server is, and where to go
export const AUTHORIZE_PATH = '/connect/authorize' // RFC 6749 §3.1
export const AUTHORIZE_CONSENT_PATH = '/connect/authorize/consent'
export const END_SESSION_PATH = '/connect/endsession' // OpenID Connect RP-Initiated Logout 1.0 §2
export const END_SESSION_CONFIRM_PATH = '/connect/endsession/confirm'
export const CIBA_APPROVE_PATH = '/ciba/approve'
export const DEVICE_PATH = '/device' // RFC 8628 §3.3: the verification_uri
export const ACCOUNT_PATH = '/account' // the person's own control panel: apps, sessions, password
export const ACCOUNT_PASSWORD_PATH = '/account/password'
export const SIGN_IN_PATH = '/account/sign-in'
export const PASSKEY_SIGN_IN_PATH = '/account/sign-in/passkey' // WebAuthn Level 3 §7.2: a sign-in with a passkey alone
export const SIGN_OUT_PATH = '/account/sign-out'
// Second factors and step-up (src/interaction/authentication-level.ts): the code after the
// password, setting up one-time codes, and the passkey sign-in a request for `phr` leads to.
export const SECOND_FACTOR_PATH = '/account/sign-in/code'
export const ACCOUNT_TWO_STEP_PATH = '/account/two-step'

// Federation: sign-in through an upstream OpenID Connect provider, one set of paths per scheme.
export const FEDERATION_CHALLENGE_PATH = '/federation/:scheme/challenge' // sends the browser upstream
export const FEDERATION_SIGNIN_PATH = '/federation/:scheme/signin' // OIDC Core §3.1.2.5: the redirect_uri registered upstream
export const FEDERATION_SIGNOUT_CALLBACK_PATH = '/federation/:scheme/signout-callback' // RP-Initiated Logout 1.0 §3
export const FEDERATION_BACKCHANNEL_LOGOUT_PATH = '/federation/:scheme/backchannel-logout' // Back-Channel Logout 1.0 §2.2

/** One of the FEDERATION_* paths for `scheme`. */
export function federationPath(path: string, scheme: string): string {
  return path.replace(':scheme', encodeURIComponent(scheme))
}

// Probes for the orchestrator.
export const LIVENESS_PATH = '/health/live'
export const READINESS_PATH = '/health/ready'

// The admin API, on a listener of its own (ADMIN_PORT; src/admin/), never on the public one.
export const ADMIN_PATH = '/admin'
export const ADMIN_CLIENTS_PATH = '/admin/clients'
export const ADMIN_USERS_PATH = '/admin/users'
export const ADMIN_API_SCOPES_PATH = '/admin/api-scopes'
export const ADMIN_API_RESOURCES_PATH = '/admin/api-resources'
export const ADMIN_IDENTITY_RESOURCES_PATH = '/admin/identity-resources'
export const ADMIN_SEED_PATH = '/admin/seed'
export const ADMIN_KEYS_PATH = '/admin/keys'
export const ADMIN_LOCKOUTS_PATH = '/admin/lockouts'
export const ADMIN_CIBA_REQUESTS_PATH = '/admin/ciba-requests'
export const ADMIN_IDENTITY_PROVIDERS_PATH = '/admin/identity-providers'
export const ADMIN_MIGRATIONS_PATH = '/admin/migrations'
export const ADMIN_REGISTRATION_TOKENS_PATH = '/admin/registration-tokens'
export const ADMIN_OPENAPI_PATH = '/admin/openapi.json'
