import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { DEMO_SEED_FILE } from '../../src/seed/paths.js'
import { SeedFile, seedJsonSchema } from '../../src/seed/schema.js'

/** A JSON Schema, as far as these assertions read it. */
type Schema = { $schema?: string; additionalProperties?: boolean; required?: string[]; items: Schema; properties: Record<string, Schema> }

describe('seed JSON Schema', () => {
  it('is a draft 2020-12 schema naming every field, closed to unknown ones', () => {
    const generated = seedJsonSchema()
    const schema = generated as Schema
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(schema.additionalProperties).toBe(false)
    expect(Object.keys(schema.properties)).toEqual(['$schema', 'apiScopes', 'apiResources', 'identityResources', 'clients', 'users', 'identityProviders'])
    const client = schema.properties.clients!.items
    expect(client.required).toEqual(['clientId'])
    expect(client.additionalProperties).toBe(false)
    expect(Object.keys(client.properties)).toEqual([
      'clientId', 'clientName', 'secrets', 'allowedGrantTypes', 'allowedScopes', 'requireClientSecret', 'accessTokenType',
      'accessTokenLifetime', 'redirectUris', 'postLogoutRedirectUris', 'requirePkce', 'requireDPoP', 'allowOfflineAccess', 'refreshTokenUsage', 'refreshTokenExpiration',
      'absoluteRefreshTokenLifetime', 'slidingRefreshTokenLifetime', 'cibaLifetime', 'pollingInterval',
      'identityProviderRestrictions', 'enableLocalLogin', 'requireMfa', 'allowedTenants', 'allowedCorsOrigins', 'allowedSubjectTokenClients', 'allowedExchangeAudiences', 'backChannelLogoutUri', 'backChannelLogoutSessionRequired',
      'requireConsent', 'alwaysIncludeUserClaimsInIdToken', 'enabled', 'jwks', 'jwksUri', 'tokenEndpointAuthMethod',
      'backchannelTokenDeliveryMode', 'backchannelClientNotificationEndpoint', 'selfRegistered',
      'requirePushedAuthorization', 'requireRequestObject', 'profile',
    ])
    expect(Object.keys(client.properties.secrets!.items.properties)).toEqual(['value', 'sha256', 'expiration', 'description'])
    expect(Object.keys(schema.properties.users!.items.properties)).toEqual(['subjectId', 'username', 'password', 'enabled', 'cibaUserCode', 'claims', 'requireMfa'])
    const provider = schema.properties.identityProviders!.items
    expect(provider.required).toEqual(['scheme', 'displayName', 'type', 'authority', 'clientId'])
    expect(Object.keys(provider.properties)).toEqual([
      'scheme', 'displayName', 'type', 'authority', 'clientId', 'clientSecret', 'scope', 'enabled', 'emailDomains', 'linkByVerifiedEmail',
    ])
    // The generated schema is itself usable by zod (round trip) and by any JSON Schema tool.
    expect(() => z.fromJSONSchema(generated)).not.toThrow()
  })

  it('accepts a seed using every documented field, and the demo seed', async () => {
    expect(SeedFile.safeParse(JSON.parse(await readFile(DEMO_SEED_FILE, 'utf8'))).success).toBe(true)
    const example = {
      apiScopes: [{ name: 'orders.read' }, { name: 'orders.write' }],
      apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'api-secret' }] }],
      identityResources: ['openid', 'profile', 'email', 'offline_access'],
      clients: [{
        clientId: 'backend', clientName: 'Back-end service',
        secrets: [{ value: 's3cret', expiration: '2030-01-01T00:00:00Z' }, { sha256: 'K7gNU3sdo+OL0wNhqoVWhr3g6s1xYv72ol/pe/Unols=' }],
        allowedGrantTypes: ['client_credentials', 'urn:openid:params:grant-type:ciba'],
        allowedScopes: ['openid', 'profile', 'orders.read'],
        requireClientSecret: true, accessTokenType: 'jwt', accessTokenLifetime: 3600,
        redirectUris: [], requirePkce: true, allowOfflineAccess: false,
        refreshTokenUsage: 'oneTimeOnly', refreshTokenExpiration: 'absolute',
        absoluteRefreshTokenLifetime: 2592000, slidingRefreshTokenLifetime: 1296000,
        cibaLifetime: 120, pollingInterval: 5,
        identityProviderRestrictions: ['corp-ad'], enableLocalLogin: true, allowedTenants: ['acme'], requireConsent: true, enabled: true,
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'backend-1' }] },
      }],
      users: [{ subjectId: 'u-1001', username: 'alice', password: 'alice-pw', enabled: true, cibaUserCode: '4711',
        claims: { name: 'Alice Example', email: 'alice@example.com' } }],
      identityProviders: [{ scheme: 'corp-ad', displayName: 'Corporate sign-in', type: 'oidc', authority: 'https://login.example.com',
        clientId: 'authz', clientSecret: 'upstream-secret', scope: 'openid profile email', enabled: true, emailDomains: ['example.com'],
        linkByVerifiedEmail: false }],
    }
    const r = SeedFile.safeParse(example)
    expect(r.error?.issues).toBeUndefined()
  })
})
