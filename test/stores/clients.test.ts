import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import type { ClientStore } from '../../src/stores/clients.js'
import { secretHash } from '../../src/tokens/handles.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let store: ClientStore
beforeAll(async () => {
  authz = await createTestDb()
  store = createPgClientStore(authz.db)
  await authz.db.query(`INSERT INTO clients (client_id, client_name, allowed_grant_types, allowed_scopes, access_token_type,
      access_token_lifetime, ciba_lifetime, polling_interval, identity_provider_restrictions, require_consent, jwks, allowed_tenants,
      allowed_cors_origins, always_include_user_claims_in_id_token, back_channel_logout_uri, back_channel_logout_session_required,
      allowed_subject_token_clients, allowed_exchange_audiences, backchannel_token_delivery_mode, backchannel_client_notification_endpoint)
    VALUES ('full', 'Full client', '{client_credentials,urn:openid:params:grant-type:ciba}', '{openid,orders.read}', 'reference',
      600, 120, 7, '{corp-ad}', true, '{"keys":[{"kty":"EC","kid":"k1"}]}', '{acme,globex}',
      '{https://app.example}', false, 'https://app.example/backchannel-logout', false, '{web,web-ref}', '{orders-api}',
      'push', 'https://app.example/ciba')`)
  await authz.db.query(`INSERT INTO clients (client_id) VALUES ('bare')`)
  await authz.db.query(
    `INSERT INTO client_secrets (client_id, value_hash, expires_at, description)
    VALUES ('full', $1, '2030-01-01T00:00:00Z', 'primary'), ('full', $2, NULL, NULL)`,
    [secretHash('a'), secretHash('b')],
  )
})
afterAll(() => authz.close())

const bareClient = {
  clientId: 'bare',
  clientName: undefined,
  enabled: true,
  secrets: [],
  requireClientSecret: true,
  allowedGrantTypes: [],
  allowedScopes: [],
  redirectUris: [],
  postLogoutRedirectUris: [],
  requirePkce: true,
  allowOfflineAccess: false,
  accessTokenType: 'jwt',
  accessTokenLifetime: undefined,
  refreshTokenUsage: 'oneTimeOnly',
  refreshTokenExpiration: 'absolute',
  absoluteRefreshTokenLifetime: 2592000,
  slidingRefreshTokenLifetime: 1296000,
  cibaLifetime: undefined,
  pollingInterval: undefined,
  identityProviderRestrictions: [],
  enableLocalLogin: true,
  requireDPoP: false,
  requireMfa: false,
  allowedTenants: [],
  allowedCorsOrigins: [],
  allowedSubjectTokenClients: [],
  allowedExchangeAudiences: [],
  backChannelLogoutUri: undefined,
  backChannelLogoutSessionRequired: true,
  requireConsent: false,
  alwaysIncludeUserClaimsInIdToken: true,
  jwks: undefined,
  backchannelTokenDeliveryMode: 'poll',
  backchannelClientNotificationEndpoint: undefined,
  requirePushedAuthorization: false,
  requireRequestObject: false,
}

describe('PgClientStore', () => {
  it('loads a client with every setting and its secrets', async () => {
    expect(await store.findById('full')).toEqual({
      ...bareClient,
      clientId: 'full',
      clientName: 'Full client',
      secrets: [
        { valueHash: secretHash('a'), expiresAt: Date.UTC(2030, 0, 1), description: 'primary' },
        { valueHash: secretHash('b'), expiresAt: undefined, description: undefined },
      ],
      allowedGrantTypes: ['client_credentials', 'urn:openid:params:grant-type:ciba'],
      allowedScopes: ['openid', 'orders.read'],
      accessTokenType: 'reference',
      accessTokenLifetime: 600,
      cibaLifetime: 120,
      pollingInterval: 7,
      identityProviderRestrictions: ['corp-ad'],
      allowedTenants: ['acme', 'globex'],
      allowedCorsOrigins: ['https://app.example'],
      allowedSubjectTokenClients: ['web', 'web-ref'],
      allowedExchangeAudiences: ['orders-api'],
      backChannelLogoutUri: 'https://app.example/backchannel-logout',
      backChannelLogoutSessionRequired: false,
      requireConsent: true,
      alwaysIncludeUserClaimsInIdToken: false,
      jwks: { keys: [{ kty: 'EC', kid: 'k1' }] },
      backchannelTokenDeliveryMode: 'push',
      backchannelClientNotificationEndpoint: 'https://app.example/ciba',
    })
  })

  it('maps column defaults and an empty secret set', async () => {
    expect(await store.findById('bare')).toEqual(bareClient)
  })

  it('lists the CORS origins of enabled clients only, once each', async () => {
    await authz.db.query(`INSERT INTO clients (client_id, allowed_cors_origins) VALUES ('twin', '{https://app.example,https://b.example}')`)
    await authz.db.query(`INSERT INTO clients (client_id, enabled, allowed_cors_origins) VALUES ('off', false, '{https://off.example}')`)
    expect((await store.corsOrigins()).sort()).toEqual(['https://app.example', 'https://b.example'])
    await authz.db.query(`DELETE FROM clients WHERE client_id IN ('twin', 'off')`)
  })

  it('returns undefined for an unknown client', async () => {
    expect(await store.findById('nope')).toBeUndefined()
  })

  it('lists clients ordered by id', async () => {
    expect((await store.list()).map((c) => c.clientId)).toEqual(['bare', 'full'])
  })

  it('adds a secret to an existing client only', async () => {
    expect(await store.addSecret('bare', { valueHash: secretHash('new'), expiresAt: Date.UTC(2031, 5, 1, 12), description: 'cli' })).toBe(
      true,
    )
    expect(await store.addSecret('nope', { valueHash: secretHash('x') })).toBe(false)
    expect((await store.findById('bare'))?.secrets).toEqual([
      { valueHash: secretHash('new'), expiresAt: Date.UTC(2031, 5, 1, 12), description: 'cli' },
    ])
  })

  it('removes a client with its secrets', async () => {
    expect(await store.remove('full')).toBe(true)
    expect(await store.remove('full')).toBe(false)
    expect(await store.findById('full')).toBeUndefined()
    const { rows } = await authz.db.query(`SELECT 1 FROM client_secrets WHERE client_id = 'full'`)
    expect(rows).toEqual([])
  })
})
