// The seed file's SQL (src/seed/apply.ts): idempotent upserts keyed by client_id / name / username,
// run inside the caller's transaction. Every UPDATE is guarded by IS DISTINCT FROM so that applying
// the same file again writes nothing: updated_at moves only when a row really changed.
import type { Queryable } from '../db/db.js'
import { createPgUserStore } from './users.postgres.js'
import { createPgIdentityProviderStore, upsertIdentityProvider } from './identity-providers.postgres.js'
import type { ApiResource, ApiScope, Client, IdentityProvider, IdentityResource, Secret, User } from '../domain/types.js'

export interface ExistingUser {
  subjectId: string
  username: string
  passwordHash: string | undefined
  cibaUserCodeHash: string | undefined
}

/** T with its undefined-able properties optional: what a parsed seed entry looks like. */
type Loose<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: T[K]
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

export interface PgSeedWriter {
  apiScopeNames: () => Promise<Set<string>>
  identityResourceNames: () => Promise<Set<string>>
  /** Users that share a username or a subject id with the file's users. */
  findUsers(usernames: string[], subjectIds: string[]): Promise<ExistingUser[]>
  upsertApiScope(s: Loose<ApiScope>): Promise<void>
  /** Upserts the API resource and sets its scopes; secrets only when given (undefined: keep). */
  upsertApiResource(
    r: Loose<
      Omit<ApiResource, 'secrets'> & {
        secrets: Secret[] | undefined
      }
    >,
  ): Promise<void>
  upsertIdentityResource(r: Loose<IdentityResource>): Promise<void>
  /** Upserts the client; secrets only when given (undefined: keep the stored ones). */
  upsertClient(
    c: Loose<
      Omit<Client, 'secrets'> & {
        secrets: Secret[] | undefined
      }
    >,
  ): Promise<void>
  /** Keyed by username (the caller has checked that the subject id is the username's, or free). */
  upsertUser: (u: User) => Promise<void>
  /** The stored providers (their secrets as stored: the seed keeps an unchanged one). */
  findIdentityProviders(): Promise<IdentityProvider[]>
  upsertIdentityProvider(p: IdentityProvider): Promise<void>
}

export function createPgSeedWriter(tx: Queryable): PgSeedWriter {
  const users = createPgUserStore(tx)
  const names = async (table: 'api_scopes' | 'identity_resources') =>
    new Set((await tx.query<{ name: string }>(`SELECT name FROM ${table}`)).rows.map((r) => r.name))

  /** Replaces the secrets of one owner with exactly `secrets`, keyed by hash. */
  const replaceSecrets = async (table: 'client_secrets' | 'api_resource_secrets', owner: string, secrets: Secret[]) => {
    const col = table === 'client_secrets' ? 'client_id' : 'api_resource_name'
    await tx.query(`DELETE FROM ${table} WHERE ${col} = $1 AND NOT (value_hash = ANY($2::text[]))`, [
      owner,
      secrets.map((s) => s.valueHash),
    ])
    for (const s of secrets) {
      if (table === 'client_secrets') {
        await upsertClientSecret(owner, s)
        continue
      }
      await tx.query(
        `INSERT INTO ${table} (${col}, value_hash, expires_at, description) VALUES ($1, $2, $3::timestamptz, $4)
         ON CONFLICT (${col}, value_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at, description = EXCLUDED.description
         WHERE (${table}.expires_at, ${table}.description) IS DISTINCT FROM (EXCLUDED.expires_at, EXCLUDED.description)`,
        [owner, s.valueHash, iso(s.expiresAt), s.description ?? null],
      )
    }
  }

  /**
   * A client secret with what is sealed of it for client_secret_jwt (migration 0035). GCM
   * ciphertexts differ at every encryption: a secret already sealed the same way (its hash, hence
   * its value, unchanged) keeps its stored ciphertext, so that applying the file again writes nothing.
   */
  const upsertClientSecret = async (owner: string, s: Secret) => {
    await tx.query(
      `INSERT INTO client_secrets (client_id, value_hash, expires_at, description, sealed_value, sealed_encrypted)
       VALUES ($1, $2, $3::timestamptz, $4, $5, $6)
       ON CONFLICT (client_id, value_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at, description = EXCLUDED.description,
         sealed_value = CASE
           WHEN EXCLUDED.sealed_value IS NULL THEN NULL
           WHEN client_secrets.sealed_value IS NOT NULL AND client_secrets.sealed_encrypted = EXCLUDED.sealed_encrypted
             THEN client_secrets.sealed_value
           ELSE EXCLUDED.sealed_value END,
         sealed_encrypted = EXCLUDED.sealed_encrypted
       WHERE (client_secrets.expires_at, client_secrets.description, client_secrets.sealed_value IS NULL, client_secrets.sealed_encrypted)
         IS DISTINCT FROM (EXCLUDED.expires_at, EXCLUDED.description, EXCLUDED.sealed_value IS NULL, EXCLUDED.sealed_encrypted)`,
      [owner, s.valueHash, iso(s.expiresAt), s.description ?? null, s.sealed?.value ?? null, s.sealed?.encrypted ?? false],
    )
  }

  return {
    apiScopeNames: () => names('api_scopes'),
    identityResourceNames: () => names('identity_resources'),

    /** Users that share a username or a subject id with the file's users. */
    async findUsers(usernames: string[], subjectIds: string[]): Promise<ExistingUser[]> {
      const { rows } = await tx.query<{
        subject_id: string
        username: string
        password_hash: string | null
        ciba_user_code_hash: string | null
      }>(
        `SELECT subject_id, username, password_hash, ciba_user_code_hash FROM users
         WHERE username = ANY($1::text[]) OR subject_id = ANY($2::text[])`,
        [usernames, subjectIds],
      )
      return rows.map((r) => ({
        subjectId: r.subject_id,
        username: r.username,
        passwordHash: r.password_hash ?? undefined,
        cibaUserCodeHash: r.ciba_user_code_hash ?? undefined,
      }))
    },

    async upsertApiScope(s: Loose<ApiScope>) {
      await tx.query(
        `INSERT INTO api_scopes (name, display_name, description, enabled) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET display_name = EXCLUDED.display_name, description = EXCLUDED.description,
           enabled = EXCLUDED.enabled, updated_at = now()
         WHERE (api_scopes.display_name, api_scopes.description, api_scopes.enabled)
           IS DISTINCT FROM (EXCLUDED.display_name, EXCLUDED.description, EXCLUDED.enabled)`,
        [s.name, s.displayName ?? null, s.description ?? null, s.enabled],
      )
    },

    /** Upserts the API resource and sets its scopes; secrets only when given (undefined: keep). */
    async upsertApiResource(r: Loose<Omit<ApiResource, 'secrets'> & { secrets: Secret[] | undefined }>) {
      await tx.query(
        `INSERT INTO api_resources (name, display_name, enabled) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET display_name = EXCLUDED.display_name, enabled = EXCLUDED.enabled, updated_at = now()
         WHERE (api_resources.display_name, api_resources.enabled) IS DISTINCT FROM (EXCLUDED.display_name, EXCLUDED.enabled)`,
        [r.name, r.displayName ?? null, r.enabled],
      )
      await tx.query(`DELETE FROM api_resource_scopes WHERE api_resource_name = $1 AND NOT (scope_name = ANY($2::text[]))`, [
        r.name,
        r.scopes,
      ])
      for (const scope of r.scopes) {
        await tx.query(`INSERT INTO api_resource_scopes (api_resource_name, scope_name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
          r.name,
          scope,
        ])
      }
      if (r.secrets) await replaceSecrets('api_resource_secrets', r.name, r.secrets)
    },

    async upsertIdentityResource(r: Loose<IdentityResource>) {
      await tx.query(
        `INSERT INTO identity_resources (name, display_name, description, claims, enabled) VALUES ($1, $2, $3, $4::text[], $5)
         ON CONFLICT (name) DO UPDATE SET display_name = EXCLUDED.display_name, description = EXCLUDED.description,
           claims = EXCLUDED.claims, enabled = EXCLUDED.enabled, updated_at = now()
         WHERE (identity_resources.display_name, identity_resources.description, identity_resources.claims, identity_resources.enabled)
           IS DISTINCT FROM (EXCLUDED.display_name, EXCLUDED.description, EXCLUDED.claims, EXCLUDED.enabled)`,
        [r.name, r.displayName ?? null, r.description ?? null, r.claims, r.enabled],
      )
    },

    /** Upserts the client; secrets only when given (undefined: keep the stored ones). */
    async upsertClient(c: Loose<Omit<Client, 'secrets'> & { secrets: Secret[] | undefined }>) {
      await tx.query(UPSERT_CLIENT, [
        c.clientId,
        c.clientName ?? null,
        c.enabled,
        c.requireClientSecret,
        c.allowedGrantTypes,
        c.allowedScopes,
        c.redirectUris,
        c.requirePkce,
        c.requireDPoP,
        c.allowOfflineAccess,
        c.accessTokenType,
        c.accessTokenLifetime ?? null,
        c.refreshTokenUsage,
        c.refreshTokenExpiration,
        c.absoluteRefreshTokenLifetime,
        c.slidingRefreshTokenLifetime,
        c.cibaLifetime ?? null,
        c.pollingInterval ?? null,
        c.identityProviderRestrictions,
        c.requireConsent,
        c.jwks === undefined ? null : JSON.stringify(c.jwks),
        c.allowedTenants,
        c.allowedCorsOrigins,
        c.postLogoutRedirectUris,
        c.alwaysIncludeUserClaimsInIdToken,
        c.backChannelLogoutUri ?? null,
        c.backChannelLogoutSessionRequired,
        c.allowedSubjectTokenClients,
        c.allowedExchangeAudiences,
        c.enableLocalLogin,
        c.jwksUri ?? null,
        c.tokenEndpointAuthMethod ?? null,
        c.backchannelTokenDeliveryMode,
        c.backchannelClientNotificationEndpoint ?? null,
        c.selfRegistered ?? null,
        c.requirePushedAuthorization,
        c.requireRequestObject,
        c.requireMfa,
        c.profile ?? null,
      ])
      if (c.secrets) await replaceSecrets('client_secrets', c.clientId, c.secrets)
    },

    /** Keyed by username (the caller has checked that the subject id is the username's, or free). */
    upsertUser: (u: User) => users.upsert(u),
    findIdentityProviders: async () => createPgIdentityProviderStore(tx).list(),
    upsertIdentityProvider: (p) => upsertIdentityProvider(tx, p),
  }
}

const CLIENT_COLUMNS = [
  'client_id',
  'client_name',
  'enabled',
  'require_client_secret',
  'allowed_grant_types',
  'allowed_scopes',
  'redirect_uris',
  'require_pkce',
  'require_dpop',
  'allow_offline_access',
  'access_token_type',
  'access_token_lifetime',
  'refresh_token_usage',
  'refresh_token_expiration',
  'absolute_refresh_token_lifetime',
  'sliding_refresh_token_lifetime',
  'ciba_lifetime',
  'polling_interval',
  'identity_provider_restrictions',
  'require_consent',
  'jwks',
  'allowed_tenants',
  'allowed_cors_origins',
  'post_logout_redirect_uris',
  'always_include_user_claims_in_id_token',
  'back_channel_logout_uri',
  'back_channel_logout_session_required',
  'allowed_subject_token_clients',
  'allowed_exchange_audiences',
  'enable_local_login',
  'jwks_uri',
  'token_endpoint_auth_method',
  'backchannel_token_delivery_mode',
  'backchannel_client_notification_endpoint',
  'self_registered',
  'require_pushed_authorization',
  'require_request_object',
  'require_mfa',
  'profile',
]
const CLIENT_CASTS: Record<string, string> = {
  allowed_grant_types: '::text[]',
  allowed_scopes: '::text[]',
  redirect_uris: '::text[]',
  identity_provider_restrictions: '::text[]',
  jwks: '::jsonb',
  allowed_tenants: '::text[]',
  allowed_cors_origins: '::text[]',
  post_logout_redirect_uris: '::text[]',
  allowed_subject_token_clients: '::text[]',
  allowed_exchange_audiences: '::text[]',
}
const UPDATABLE = CLIENT_COLUMNS.slice(1)
const UPSERT_CLIENT = `
  INSERT INTO clients (${CLIENT_COLUMNS.join(', ')})
  VALUES (${CLIENT_COLUMNS.map((c, i) => `$${i + 1}${CLIENT_CASTS[c] ?? ''}`).join(', ')})
  ON CONFLICT (client_id) DO UPDATE SET ${UPDATABLE.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()
  WHERE (${UPDATABLE.map((c) => `clients.${c}`).join(', ')}) IS DISTINCT FROM (${UPDATABLE.map((c) => `EXCLUDED.${c}`).join(', ')})`
