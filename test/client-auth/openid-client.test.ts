// openid-client v6, unchanged, authenticating with private_key_jwt (RFC 7523 §2.2) for
// client_credentials: discovery, its own assertion (aud, jti, exp chosen by the library), a token.
// Its requests go through app.inject, so the server's clock and database are the test's.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../helpers/app.js'
import { assertionSeed, newKey, type TestKey } from './assertion-fixtures.js'

let t: TestApp
let key: TestKey
beforeAll(async () => {
  t = await createTestApp()
  key = await newKey('signer-1')
  await applySeed(t.db, assertionSeed(key, 'https://keys.example/jwks'))
})
afterAll(async () => t?.close())

function headersOf(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  new Headers(init).forEach((value, name) => (out[name] = value))
  return out
}

/** fetch for openid-client, answered in-process by the app. */
const inject: client.CustomFetch = async (url, options) => {
  const u = new URL(url)
  const res = await t.app.inject({
    method: options.method as 'GET' | 'POST',
    url: `${u.pathname}${u.search}`,
    headers: headersOf(options.headers),
    ...(typeof options.body === 'string' || options.body instanceof URLSearchParams ? { payload: options.body.toString() } : {}),
  })
  return new Response(res.statusCode === 204 ? null : res.body, {
    status: res.statusCode,
    headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])),
  })
}

describe('openid-client: private_key_jwt', () => {
  it('gets a client_credentials token with client.PrivateKeyJwt, and a second one with a fresh assertion', async () => {
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'signer',
      undefined,
      client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
      {
        [client.customFetch]: inject,
      },
    )
    config[client.customFetch] = inject
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('private_key_jwt')
    for (let i = 0; i < 2; i++) {
      const tokens = await client.clientCredentialsGrant(config, { scope: 'orders.read' })
      expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'orders.read', expires_in: expect.any(Number) })
      expect(tokens.access_token).toMatch(/^ey/)
    }
  })

  it('is refused with invalid_client when signing with a key the client did not register', async () => {
    const stranger = await newKey('signer-1')
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'signer',
      undefined,
      client.PrivateKeyJwt({ key: stranger.privateKey, kid: stranger.kid }),
      { [client.customFetch]: inject },
    )
    config[client.customFetch] = inject
    await expect(client.clientCredentialsGrant(config, { scope: 'orders.read' })).rejects.toMatchObject({
      error: 'invalid_client',
      status: 401,
    })
  })
})
