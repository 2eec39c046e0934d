import { describe, expect, it } from 'vitest'
import { createDiscoveryService } from '../../../src/flows/discovery/service.js'

const keys = { jwks: async () => ({ keys: [] }), algorithms: () => ['ES256' as const, 'PS256' as const, 'RS256' as const] }
const config = { issuer: 'https://id.example.com', keyActivationDelay: 3600 }

describe('discovery service', () => {
  it('builds the base document, without a catalogue', async () => {
    const d = createDiscoveryService({ config, keys })
    expect(d.maxAge).toBe(300)
    expect(await d.document()).toEqual({
      issuer: 'https://id.example.com',
      jwks_uri: 'https://id.example.com/.well-known/openid-configuration/jwks',
      token_endpoint: 'https://id.example.com/connect/token',
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'], // RS256, and ES256 for fapi2 clients; not every alg we hold keys for
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'amr', 'sid'],
    })
  })

  it('merges contributions in order: arrays united, other members replaced', async () => {
    const d = createDiscoveryService({ config, keys, contributions: [() => ({ grant_types_supported: ['client_credentials'] })] })
    d.contribute(async () => ({ grant_types_supported: ['urn:openid:params:grant-type:ciba', 'client_credentials'], x: 1 }))
    d.contribute(() => ({ x: 2, token_endpoint_auth_methods_supported: ['private_key_jwt'] }))
    const doc = await d.document()
    expect(doc.grant_types_supported).toEqual(['client_credentials', 'urn:openid:params:grant-type:ciba'])
    expect(doc.x).toBe(2)
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'])
  })

  it('never lets clients cache longer than a new key takes to start signing, after a replica reloads keys', () => {
    expect(createDiscoveryService({ config: { ...config, keyActivationDelay: 60 }, keys }).maxAge).toBe(0)
    expect(createDiscoveryService({ config: { ...config, keyActivationDelay: 90 }, keys }).maxAge).toBe(30)
    expect(createDiscoveryService({ config: { ...config, keyActivationDelay: 360 }, keys }).maxAge).toBe(300)
  })
})
