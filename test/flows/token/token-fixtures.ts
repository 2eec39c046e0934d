// Seed shared by the token, introspection and revocation tests (the docs/seed-file.md format).
import { applySeed } from '../../../src/seed/apply.js'
import type { TestApp } from '../../helpers/app.js'

export const CC = 'client_credentials'

export const TOKEN_SEED = {
  apiScopes: [
    { name: 'orders.read' },
    { name: 'orders.write' },
    { name: 'billing.read' },
    { name: 'stock.read' },
    { name: 'lonely.scope' },
  ],
  apiResources: [
    { name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'orders-secret' }] },
    {
      name: 'billing-api',
      scopes: ['billing.read'],
      secrets: [{ value: 'billing-secret', expiration: '2020-01-01T00:00:00Z' }, { value: 'billing-secret-2' }],
    },
    { name: 'stock-api', scopes: ['stock.read'], enabled: false, secrets: [{ value: 'stock-secret' }] },
  ],
  identityResources: ['openid', 'profile', 'offline_access'],
  clients: [
    {
      clientId: 'backend',
      secrets: [{ value: 'old-secret', expiration: '2020-01-01T00:00:00Z' }, { value: 's3cret' }, { value: 'next-secret' }],
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read', 'orders.write', 'billing.read', 'openid', 'lonely.scope', 'stock.read'],
      allowedTenants: ['acme'],
      identityProviderRestrictions: ['x'],
    },
    {
      clientId: 'ref-client',
      secrets: [{ value: 'ref-secret' }],
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read', 'billing.read'],
      accessTokenType: 'reference',
      accessTokenLifetime: 600,
    },
    { clientId: 'other', secrets: [{ value: 'other-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'] },
    {
      clientId: 'disabled',
      secrets: [{ value: 'disabled-secret' }],
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read'],
      enabled: false,
    },
    { clientId: 'public-app', requireClientSecret: false, allowedGrantTypes: [CC], allowedScopes: ['orders.read'] },
    {
      clientId: 'ciba-only',
      secrets: [{ value: 'ciba-secret' }],
      allowedGrantTypes: ['urn:openid:params:grant-type:ciba'],
      allowedScopes: ['orders.read'],
    },
    { clientId: 'no-scopes', secrets: [{ value: 'ns-secret' }], allowedGrantTypes: [CC], allowedScopes: ['openid'] },
    { clientId: 'odd id:é', secrets: [{ value: 'p@ss:w%rd +é' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'] },
    {
      clientId: 'offline',
      secrets: [{ value: 'offline-secret' }],
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read', 'offline_access'],
      allowOfflineAccess: true,
    },
  ],
}

export async function seedTokens(authz: TestApp): Promise<void> {
  await applySeed(authz.db, TOKEN_SEED)
}

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }
