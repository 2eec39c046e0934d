// Clients and their secrets (ARCHITECTURE.md "Data rules": secrets are stored only as base64 SHA-256/512).
// findById is on the token endpoint's hot path: one round trip, secrets folded in with json_agg.
import type { Queryable } from '../db/db.js'
import type {
  AccessTokenType,
  ClientProfile,
  BackchannelTokenDeliveryMode,
  Client,
  RefreshTokenExpiration,
  RefreshTokenUsage,
  TokenEndpointAuthMethod,
} from '../domain/types.js'
import { withProfile } from '../domain/client-profile.js'
import type { ClientStore } from './clients.js'
import { secretsJsonAgg, toSecret, type SecretJson } from './columns.postgres.js'

interface ClientRow {
  client_id: string
  client_name: string | null
  enabled: boolean
  require_client_secret: boolean
  allowed_grant_types: string[]
  allowed_scopes: string[]
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
  require_pkce: boolean
  require_dpop: boolean
  allow_offline_access: boolean
  access_token_type: AccessTokenType
  access_token_lifetime: number | null
  refresh_token_usage: RefreshTokenUsage
  refresh_token_expiration: RefreshTokenExpiration
  absolute_refresh_token_lifetime: number
  sliding_refresh_token_lifetime: number
  ciba_lifetime: number | null
  polling_interval: number | null
  identity_provider_restrictions: string[]
  enable_local_login: boolean
  allowed_tenants: string[]
  require_mfa: boolean
  allowed_cors_origins: string[]
  allowed_subject_token_clients: string[]
  allowed_exchange_audiences: string[]
  back_channel_logout_uri: string | null
  back_channel_logout_session_required: boolean
  require_consent: boolean
  always_include_user_claims_in_id_token: boolean
  jwks: { keys: Record<string, unknown>[] } | null
  jwks_uri: string | null
  token_endpoint_auth_method: TokenEndpointAuthMethod | null
  backchannel_token_delivery_mode: BackchannelTokenDeliveryMode
  backchannel_client_notification_endpoint: string | null
  self_registered: 'registration' | 'metadata-document' | null
  require_pushed_authorization: boolean
  require_request_object: boolean
  profile: ClientProfile | null
  secrets: SecretJson[] | null
}

const SELECT_CLIENT = `
  SELECT c.*,
    ${secretsJsonAgg('client_secrets', 'client_id', 'c.client_id')} AS secrets
  FROM clients c`

/** The stored client with its profile applied (src/domain/client-profile.ts): what every endpoint sees. */
function toClient(r: ClientRow): Client {
  return withProfile({
    clientId: r.client_id,
    clientName: r.client_name ?? undefined,
    enabled: r.enabled,
    secrets: (r.secrets ?? []).map(toSecret),
    requireClientSecret: r.require_client_secret,
    allowedGrantTypes: r.allowed_grant_types,
    allowedScopes: r.allowed_scopes,
    redirectUris: r.redirect_uris,
    postLogoutRedirectUris: r.post_logout_redirect_uris,
    requirePkce: r.require_pkce,
    requireDPoP: r.require_dpop,
    allowOfflineAccess: r.allow_offline_access,
    accessTokenType: r.access_token_type,
    accessTokenLifetime: r.access_token_lifetime ?? undefined,
    refreshTokenUsage: r.refresh_token_usage,
    refreshTokenExpiration: r.refresh_token_expiration,
    absoluteRefreshTokenLifetime: r.absolute_refresh_token_lifetime,
    slidingRefreshTokenLifetime: r.sliding_refresh_token_lifetime,
    cibaLifetime: r.ciba_lifetime ?? undefined,
    pollingInterval: r.polling_interval ?? undefined,
    identityProviderRestrictions: r.identity_provider_restrictions,
    enableLocalLogin: r.enable_local_login,
    allowedTenants: r.allowed_tenants,
    requireMfa: r.require_mfa,
    allowedCorsOrigins: r.allowed_cors_origins,
    allowedSubjectTokenClients: r.allowed_subject_token_clients,
    allowedExchangeAudiences: r.allowed_exchange_audiences,
    backChannelLogoutUri: r.back_channel_logout_uri ?? undefined,
    backChannelLogoutSessionRequired: r.back_channel_logout_session_required,
    requireConsent: r.require_consent,
    alwaysIncludeUserClaimsInIdToken: r.always_include_user_claims_in_id_token,
    jwks: r.jwks ?? undefined,
    jwksUri: r.jwks_uri ?? undefined,
    tokenEndpointAuthMethod: r.token_endpoint_auth_method ?? undefined,
    backchannelTokenDeliveryMode: r.backchannel_token_delivery_mode,
    backchannelClientNotificationEndpoint: r.backchannel_client_notification_endpoint ?? undefined,
    selfRegistered: r.self_registered ?? undefined,
    requirePushedAuthorization: r.require_pushed_authorization,
    requireRequestObject: r.require_request_object,
    profile: r.profile ?? undefined,
  })
}

export function createPgClientStore(db: Queryable): ClientStore {
  return {
    async findById(clientId) {
      const { rows } = await db.query<ClientRow>(`${SELECT_CLIENT} WHERE c.client_id = $1`, [clientId])
      return rows[0] && toClient(rows[0])
    },
    async corsOrigins() {
      const { rows } = await db.query<{ origin: string }>(
        'SELECT DISTINCT o AS origin FROM clients, unnest(allowed_cors_origins) AS o WHERE enabled',
      )
      return rows.map((r) => r.origin)
    },
    async list() {
      const { rows } = await db.query<ClientRow>(`${SELECT_CLIENT} ORDER BY c.client_id`)
      return rows.map(toClient)
    },
    async remove(clientId) {
      // client_secrets go with it (ON DELETE CASCADE).
      const { rowCount } = await db.query('DELETE FROM clients WHERE client_id = $1', [clientId])
      return rowCount === 1
    },
    async addSecret(clientId, secret) {
      // INSERT … SELECT: no row when the client does not exist; re-adding the same hash updates it.
      const { rowCount } = await db.query(
        `INSERT INTO client_secrets (client_id, value_hash, expires_at, description)
         SELECT client_id, $2, $3::timestamptz, $4 FROM clients WHERE client_id = $1
         ON CONFLICT (client_id, value_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at, description = EXCLUDED.description`,
        [
          clientId,
          secret.valueHash,
          secret.expiresAt === undefined ? null : new Date(secret.expiresAt).toISOString(),
          secret.description ?? null,
        ],
      )
      return rowCount === 1
    },
    async setEnabled(clientId, enabled) {
      const { rowCount } = await db.query('UPDATE clients SET enabled = $2, updated_at = now() WHERE client_id = $1', [clientId, enabled])
      return rowCount === 1
    },
  }
}
