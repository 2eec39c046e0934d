// Upstream OpenID Connect providers (table identity_providers, migrations/0030).
import type { Queryable } from '../db/db.js'
import type { IdentityProvider } from '../domain/types.js'
import type { IdentityProviderStore } from './identity-providers.js'

interface ProviderRow {
  scheme: string
  display_name: string
  type: 'oidc'
  authority: string
  client_id: string
  client_secret: string | null
  client_secret_encrypted: boolean
  scope: string
  enabled: boolean
  email_domains: string[]
  link_by_verified_email: boolean
}

const SELECT_PROVIDER = `SELECT scheme, display_name, type, authority, client_id, client_secret, client_secret_encrypted,
  scope, enabled, email_domains, link_by_verified_email FROM identity_providers`

function toProvider(r: ProviderRow): IdentityProvider {
  return {
    scheme: r.scheme,
    displayName: r.display_name,
    type: r.type,
    authority: r.authority,
    clientId: r.client_id,
    clientSecret: r.client_secret === null ? undefined : { value: r.client_secret, encrypted: r.client_secret_encrypted },
    scope: r.scope,
    enabled: r.enabled,
    emailDomains: r.email_domains,
    linkByVerifiedEmail: r.link_by_verified_email,
  }
}

export function createPgIdentityProviderStore(db: Queryable): IdentityProviderStore {
  return {
    async findByScheme(scheme) {
      const { rows } = await db.query<ProviderRow>(`${SELECT_PROVIDER} WHERE scheme = $1`, [scheme])
      return rows[0] && toProvider(rows[0])
    },
    async list() {
      const { rows } = await db.query<ProviderRow>(`${SELECT_PROVIDER} ORDER BY scheme`)
      return rows.map(toProvider)
    },
    async remove(scheme) {
      const { rowCount } = await db.query('DELETE FROM identity_providers WHERE scheme = $1', [scheme])
      return rowCount === 1
    },
  }
}

/** Upserts a provider inside the seed's transaction; writes nothing when nothing changed. */
export async function upsertIdentityProvider(tx: Queryable, p: IdentityProvider): Promise<void> {
  await tx.query(
    `INSERT INTO identity_providers (scheme, display_name, type, authority, client_id, client_secret, client_secret_encrypted,
       scope, enabled, email_domains, link_by_verified_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[], $11)
     ON CONFLICT (scheme) DO UPDATE SET display_name = EXCLUDED.display_name, type = EXCLUDED.type, authority = EXCLUDED.authority,
       client_id = EXCLUDED.client_id, client_secret = EXCLUDED.client_secret, client_secret_encrypted = EXCLUDED.client_secret_encrypted,
       scope = EXCLUDED.scope, enabled = EXCLUDED.enabled, email_domains = EXCLUDED.email_domains,
       link_by_verified_email = EXCLUDED.link_by_verified_email, updated_at = now()
     WHERE (identity_providers.display_name, identity_providers.type, identity_providers.authority, identity_providers.client_id,
            identity_providers.client_secret, identity_providers.client_secret_encrypted, identity_providers.scope,
            identity_providers.enabled, identity_providers.email_domains, identity_providers.link_by_verified_email)
       IS DISTINCT FROM (EXCLUDED.display_name, EXCLUDED.type, EXCLUDED.authority, EXCLUDED.client_id, EXCLUDED.client_secret,
            EXCLUDED.client_secret_encrypted, EXCLUDED.scope, EXCLUDED.enabled, EXCLUDED.email_domains, EXCLUDED.link_by_verified_email)`,
    [
      p.scheme,
      p.displayName,
      p.type,
      p.authority,
      p.clientId,
      p.clientSecret?.value ?? null,
      p.clientSecret?.encrypted ?? false,
      p.scope,
      p.enabled,
      p.emailDomains,
      p.linkByVerifiedEmail,
    ],
  )
}
