// docs/client-authentication.md: its seed example, applied exactly as printed, gives a client that
// gets a token with a private_key_jwt assertion made of the claims the page lists.
import { readFileSync } from 'node:fs'
import { importJWK, type CryptoKey } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../helpers/app.js'
import { assertion, post, withAssertion } from '../client-auth/assertion-fixtures.js'

/** The private half of the key the page's example publishes (a test key, used nowhere else). */
const PRIVATE_JWK = {
  kty: 'EC',
  crv: 'P-256',
  x: 'WgW0ZAIdmY1VvcviaGCK9ydzRuAuNudGjj7ppfJaJhw',
  y: 'bzHiCuM7ioC2D39-uJ5VlRaiIozIx0J_tQVD7RdvbC8',
  d: '3PpxQBVihPesu5HnYJbxXGk3nHX8-Lg1X7wh6XOxn9E',
}

const page = readFileSync('docs/client-authentication.md', 'utf8')
const seed = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(page)![1]!) as unknown

let t: TestApp
let privateKey: CryptoKey
beforeAll(async () => {
  t = await createTestApp()
  privateKey = (await importJWK(PRIVATE_JWK, 'ES256')) as CryptoKey
  await applySeed(t.db, seed)
})
afterAll(async () => t?.close())

describe('docs/client-authentication.md', () => {
  it('seeds a private_key_jwt client that gets a token with an assertion, and not with the same one twice', async () => {
    const key = { privateKey, kid: 'payments-2026', alg: 'ES256' }
    const jwt = await assertion(t, key, 'payments-service', { aud: `${TEST_ISSUER}/connect/token` })
    const params = { grant_type: 'client_credentials', scope: 'orders.read', ...withAssertion(jwt) }
    const res = await post(t, '/connect/token', params)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' })
    const replay = await post(t, '/connect/token', params)
    expect({ status: replay.statusCode, body: replay.json() }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    })
  })
})
