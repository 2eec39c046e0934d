// The seed fields tokenEndpointAuthMethod and jwksUri: what the seed refuses, what the admin API
// answers, and how a client_secret_jwt client's secret is kept (encrypted with
// KEY_ENCRYPTION_SECRET, bound to its row) so that its HMAC can be checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkSeed } from '../../src/seed/apply.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminToken, createAdminTestApp } from '../admin/admin-fixtures.js'
import { assertion, CC, HMAC_SECRET, newKey, post, withAssertion } from './assertion-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp({ KEY_ENCRYPTION_SECRET: 'a-key-encryption-secret' })
  call = admin(t, await adminToken(t))
})
afterAll(async () => t?.close())

const problems = (client: Record<string, unknown>) => checkSeed({ clients: [{ clientId: 'c', ...client }] }).problems

describe('seed: tokenEndpointAuthMethod and jwksUri', () => {
  it('refuses what cannot work, naming the field', async () => {
    const jwk = (await newKey('k')).publicJwk
    expect(problems({ tokenEndpointAuthMethod: 'private_key_jwt' })).toEqual([
      "clients[0].tokenEndpointAuthMethod: client c: private_key_jwt needs the client's public keys: jwks or jwksUri",
    ])
    expect(problems({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://keys.example/jwks' })).toEqual([
      'clients[0].jwksUri: client c: jwksUri "http://keys.example/jwks" must use https (http only for localhost, *.localhost, 127.0.0.1 and [::1])',
    ])
    expect(problems({ jwksUri: 'https://keys.example/jwks', jwks: { keys: [jwk] } })).toEqual([
      'clients[0].jwksUri: client c: give jwks or jwksUri, not both (RFC 7591 §2)',
    ])
    expect(problems({ tokenEndpointAuthMethod: 'client_secret_jwt', secrets: [{ sha256: 'A'.repeat(43) + '=' }] })).toEqual([
      'clients[0].secrets[0]: client c: client_secret_jwt needs the secret itself ("value"): an HMAC cannot be checked against a hash',
    ])
    expect(problems({ tokenEndpointAuthMethod: 'none' })).toEqual([
      'clients[0].tokenEndpointAuthMethod: client c: none is for a public client: set requireClientSecret to false',
    ])
    expect(problems({ tokenEndpointAuthMethod: 'tls_client_auth' })[0]).toMatch(/^clients\[0\]\.tokenEndpointAuthMethod: Invalid option/)
    for (const uri of ['http://localhost:8080/jwks', 'http://keys.localhost/jwks', 'http://127.0.0.1/jwks', 'http://[::1]/jwks']) {
      expect(problems({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: uri })).toEqual([])
    }
  })
})

describe('admin API: the new fields', () => {
  it('stores and answers them; a client_secret_jwt secret is kept encrypted and works', async () => {
    const body = {
      tokenEndpointAuthMethod: 'client_secret_jwt',
      secrets: [{ value: HMAC_SECRET }],
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read'],
    }
    const res = await call('PUT', '/admin/clients/hmac-admin', { body })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ clientId: 'hmac-admin', tokenEndpointAuthMethod: 'client_secret_jwt' })
    expect(res.json()).not.toHaveProperty('secrets')
    const { rows } = await t.db.query<{ sealed_value: string; sealed_encrypted: boolean }>(
      `SELECT sealed_value, sealed_encrypted FROM client_secrets WHERE client_id = 'hmac-admin'`,
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]!.sealed_encrypted).toBe(true)
    expect(rows[0]!.sealed_value).not.toContain(HMAC_SECRET)
    const jwt = await assertion(t, { privateKey: new TextEncoder().encode(HMAC_SECRET), alg: 'HS256' }, 'hmac-admin')
    expect((await post(t, '/connect/token', { grant_type: CC, scope: 'orders.read', ...withAssertion(jwt) })).statusCode).toBe(200)

    // The same PUT again keeps the stored ciphertext (nothing changes); another method drops it.
    const etag = res.headers.etag
    const again = await call('PUT', '/admin/clients/hmac-admin', { body })
    expect(again.headers.etag).toBe(etag)
    const sealedAfter = await t.db.query<{ sealed_value: string }>(`SELECT sealed_value FROM client_secrets WHERE client_id = 'hmac-admin'`)
    expect(sealedAfter.rows[0]!.sealed_value).toBe(rows[0]!.sealed_value)
    await call('PUT', '/admin/clients/hmac-admin', { body: { ...body, tokenEndpointAuthMethod: 'client_secret_post' } })
    const dropped = await t.db.query<{ sealed_value: string | null }>(
      `SELECT sealed_value FROM client_secrets WHERE client_id = 'hmac-admin'`,
    )
    expect(dropped.rows).toEqual([{ sealed_value: null }])

    const remote = await call('PUT', '/admin/clients/remote-admin', {
      body: { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks', allowedGrantTypes: [CC] },
    })
    expect(remote.statusCode).toBe(201)
    expect(remote.json()).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks' })
  })
})
