// Client authentication by assertion (RFC 7523 §2.2, OpenID Connect Core §9): private_key_jwt and
// client_secret_jwt at the token, CIBA, revocation and device authorization endpoints; every check
// of the assertion refused with one fixed invalid_client answer; replays refused across replicas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, FORM, form, TEST_ISSUER, type TestApp } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { applySeed } from '../../src/seed/apply.js'
import {
  assertion,
  assertionSeed,
  CC,
  FAILED,
  HMAC_SECRET,
  jwksServer,
  newKey,
  nextAddress,
  post,
  unsignedAssertion,
  withAssertion,
  type TestKey,
} from './assertion-fixtures.js'

let db: TestDb
let t: TestApp
let replica: TestApp
let key: TestKey
let jwks: Awaited<ReturnType<typeof jwksServer>>

beforeAll(async () => {
  db = await createTestDb()
  t = await createTestApp({ testDb: db })
  replica = await createTestApp({ testDb: db })
  replica.clock.set(t.clock.now())
  key = await newKey('signer-1')
  jwks = await jwksServer()
  await applySeed(t.db, assertionSeed(key, jwks.url))
})
afterAll(async () => {
  await t?.close()
  await replica?.close()
  await db?.close()
  await jwks?.close()
})

const tokenWith = async (jwt: string, extra: Record<string, string> = {}, app = t) =>
  post(app, '/connect/token', { grant_type: CC, scope: 'orders.read', ...withAssertion(jwt, extra) })

async function expectRefused(jwt: string, extra: Record<string, string> = {}) {
  const res = await tokenWith(jwt, extra)
  expect({ status: res.statusCode, body: res.json(), www: res.headers['www-authenticate'], cache: res.headers['cache-control'] }).toEqual({
    status: 401,
    body: FAILED,
    www: undefined,
    cache: 'no-store',
  })
}

describe('private_key_jwt', () => {
  it('gets a token at the token endpoint, with aud the issuer or the token endpoint URL', async () => {
    for (const aud of [TEST_ISSUER, `${TEST_ISSUER}/connect/token`, [TEST_ISSUER, 'https://elsewhere.example']]) {
      const res = await tokenWith(await assertion(t, key, 'signer', { aud }))
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' })
    }
    // client_id beside the assertion, naming the same client
    const res = await tokenWith(await assertion(t, key, 'signer'), { client_id: 'signer' })
    expect(res.statusCode).toBe(200)
  })

  it('authenticates at CIBA, device authorization and revocation', async () => {
    const ciba = await post(t, '/connect/ciba', {
      scope: 'openid',
      login_hint: 'alice',
      ...withAssertion(await assertion(t, key, 'signer', { aud: `${TEST_ISSUER}/connect/ciba` })),
    })
    expect(ciba.statusCode).toBe(200)
    expect(Object.keys(ciba.json()).sort()).toEqual(['auth_req_id', 'expires_in', 'interval'])

    const device = await post(t, '/connect/deviceauthorization', {
      scope: 'orders.read',
      ...withAssertion(await assertion(t, key, 'signer')),
    })
    expect(device.statusCode).toBe(200)
    expect(device.json()).toMatchObject({ device_code: expect.any(String), user_code: expect.any(String) })

    const issued = (await tokenWith(await assertion(t, key, 'signer'))).json<{ access_token: string }>()
    const revoke = await post(t, '/connect/revocation', {
      token: issued.access_token,
      ...withAssertion(await assertion(t, key, 'signer', { aud: `${TEST_ISSUER}/connect/revocation` })),
    })
    expect(revoke.statusCode).toBe(200)
    const introspected = await t.app.inject({
      method: 'POST',
      url: '/connect/introspect',
      headers: { ...FORM, authorization: basic('legacy', 'legacy-secret') },
      payload: form({ token: issued.access_token }),
    })
    expect(introspected.json()).toEqual({ active: false })
  })

  it('refuses an assertion used twice, also at a second replica sharing the database', async () => {
    const jwt = await assertion(t, key, 'signer')
    expect((await tokenWith(jwt)).statusCode).toBe(200)
    await expectRefused(jwt)
    const again = await tokenWith(jwt, {}, replica)
    expect({ status: again.statusCode, body: again.json() }).toEqual({ status: 401, body: FAILED })
    // and a fresh assertion carrying a used jti
    const jti = 'reused-jti'
    expect((await tokenWith(await assertion(t, key, 'signer', { jti }), {}, replica)).statusCode).toBe(200)
    await expectRefused(await assertion(t, key, 'signer', { jti }))
  })

  it('refuses a wrong aud, an expired assertion and one whose exp is too far ahead', async () => {
    const now = Math.floor(t.clock.now() / 1000)
    await expectRefused(await assertion(t, key, 'signer', { aud: 'https://other.example' }))
    await expectRefused(await assertion(t, key, 'signer', { aud: `${TEST_ISSUER}/connect/introspect` }))
    await expectRefused(await assertion(t, key, 'signer', { iat: now - 600, exp: now - 60 }))
    await expectRefused(await assertion(t, key, 'signer', { exp: now + 3600 }))
    await expectRefused(await assertion(t, key, 'signer', { nbf: now + 300 }))
    await expectRefused(await assertion(t, key, 'signer', { iat: now + 300, exp: now + 400 }))
    // Within the 30-second skew, a client clock slightly ahead is fine.
    expect((await tokenWith(await assertion(t, key, 'signer', { iat: now + 10, nbf: now + 10 }))).statusCode).toBe(200)
  })

  it('refuses alg none, HS256 keyed with the public key, a foreign key, iss≠sub and no jti', async () => {
    await expectRefused(unsignedAssertion(t, 'signer'))
    const publicKeyBytes = new TextEncoder().encode(JSON.stringify(key.publicJwk))
    await expectRefused(await assertion(t, { privateKey: publicKeyBytes, kid: key.kid, alg: 'HS256' }, 'signer'))
    const xBytes = Buffer.from(key.publicJwk.x!, 'base64url')
    await expectRefused(await assertion(t, { privateKey: new Uint8Array(xBytes), kid: key.kid, alg: 'HS256' }, 'signer'))
    const stranger = await newKey('signer-1')
    await expectRefused(await assertion(t, stranger, 'signer'))
    await expectRefused(await assertion(t, key, 'signer', { iss: 'legacy' }))
    await expectRefused(await assertion(t, key, 'signer', { jti: undefined }))
  })

  it('refuses a client_id that differs from the assertion, and an assertion beside a secret', async () => {
    await expectRefused(await assertion(t, key, 'signer'), { client_id: 'legacy' })
    const both = await tokenWith(await assertion(t, key, 'signer'), { client_secret: 'signer-secret' })
    expect({ status: both.statusCode, body: both.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'more than one client authentication method was used' },
    })
    const type = await post(t, '/connect/token', { grant_type: CC, client_assertion: await assertion(t, key, 'signer') })
    expect(type.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client_assertion and client_assertion_type must be sent together',
    })
  })

  it('refuses the secret of a client fixed to private_key_jwt, by Basic and in the body', async () => {
    const viaBasic = await t.app.inject({
      method: 'POST',
      url: '/connect/token',
      remoteAddress: nextAddress(),
      headers: { ...FORM, authorization: basic('signer', 'signer-secret') },
      payload: form({ grant_type: CC }),
    })
    expect({ status: viaBasic.statusCode, body: viaBasic.json(), www: viaBasic.headers['www-authenticate'] }).toEqual({
      status: 401,
      body: FAILED,
      www: `Basic realm="${TEST_ISSUER}"`,
    })
    const viaBody = await post(t, '/connect/token', { grant_type: CC, client_id: 'signer', client_secret: 'signer-secret' })
    expect({ status: viaBody.statusCode, body: viaBody.json() }).toEqual({ status: 401, body: FAILED })
    // and an assertion from a client with no method fixed (today's behaviour: a secret only)
    await expectRefused(await assertion(t, key, 'legacy'))
  })

  it('refuses the secret of a client fixed to an assertion method at introspection too', async () => {
    const refused = { error: 'invalid_client', error_description: 'caller authentication failed' }
    for (const [clientId, secret] of [
      ['signer', 'signer-secret'],
      ['hmac', HMAC_SECRET],
    ]) {
      const viaBasic = await t.app.inject({
        method: 'POST',
        url: '/connect/introspect',
        remoteAddress: nextAddress(),
        headers: { ...FORM, authorization: basic(clientId!, secret!) },
        payload: form({ token: 'not-a-token' }),
      })
      expect({ clientId, status: viaBasic.statusCode, body: viaBasic.json() }).toEqual({ clientId, status: 401, body: refused })
      const viaBody = await post(t, '/connect/introspect', { token: 'not-a-token', client_id: clientId!, client_secret: secret! })
      expect({ clientId, status: viaBody.statusCode, body: viaBody.json() }).toEqual({ clientId, status: 401, body: refused })
    }
    // A client with no method fixed still introspects with its secret.
    const legacy = await post(t, '/connect/introspect', { token: 'not-a-token', client_id: 'legacy', client_secret: 'legacy-secret' })
    expect({ status: legacy.statusCode, body: legacy.json() }).toEqual({ status: 200, body: { active: false } })
  })

  it('counts failed assertions toward the client authentication throttle', async () => {
    const address = nextAddress()
    for (let i = 0; i < 10; i++) {
      const res = await post(t, '/connect/token', { grant_type: CC, ...withAssertion(unsignedAssertion(t, 'signer')) }, address)
      expect(res.statusCode).toBe(401)
    }
    const good = await post(t, '/connect/token', { grant_type: CC, ...withAssertion(await assertion(t, key, 'signer')) }, address)
    expect({ status: good.statusCode, body: good.json(), retry: good.headers['retry-after'] }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'too many failed client authentications from this address, retry later' },
      retry: '60',
    })
  })
})

describe('client_secret_jwt', () => {
  const secretKey = { privateKey: new TextEncoder().encode(HMAC_SECRET), alg: 'HS256' }

  it('gets a token with an HMAC of the client secret, and refuses another secret or an asymmetric alg', async () => {
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      const res = await tokenWith(await assertion(t, { ...secretKey, alg }, 'hmac'))
      expect(res.statusCode).toBe(200)
    }
    await expectRefused(await assertion(t, { privateKey: new TextEncoder().encode('x'.repeat(44)), alg: 'HS256' }, 'hmac'))
    await expectRefused(await assertion(t, key, 'hmac'))
    // the secret itself, by Basic, is not its method
    const res = await post(t, '/connect/token', { grant_type: CC, client_id: 'hmac', client_secret: HMAC_SECRET })
    expect(res.statusCode).toBe(401)
  })
})

describe('jwksUri', () => {
  it('fetches the keys, fetches again for an unknown kid at most once every 10 seconds', async () => {
    const k1 = await newKey('remote-1')
    const k2 = await newKey('remote-2')
    jwks.keys.push(k1.publicJwk)
    expect((await tokenWith(await assertion(t, k1, 'remote'))).statusCode).toBe(200)
    expect(jwks.requests()).toBe(1)
    expect((await tokenWith(await assertion(t, k1, 'remote'))).statusCode).toBe(200)
    expect(jwks.requests()).toBe(1) // cached

    // The client rotates to k2; within 10 seconds of the last fetch the unknown kid fetches nothing.
    jwks.keys.push(k2.publicJwk)
    t.clock.advance(5)
    await expectRefused(await assertion(t, k2, 'remote'))
    expect(jwks.requests()).toBe(1)
    t.clock.advance(5)
    expect((await tokenWith(await assertion(t, k2, 'remote'))).statusCode).toBe(200)
    expect(jwks.requests()).toBe(2)

    // Many assertions with made-up kids: one fetch per 10 seconds.
    for (let i = 0; i < 5; i++) await expectRefused(await assertion(t, { ...k2, kid: `made-up-${i}` }, 'remote'))
    expect(jwks.requests()).toBe(2)
    t.clock.advance(10)
    await expectRefused(await assertion(t, { ...k2, kid: 'made-up-again' }, 'remote'))
    expect(jwks.requests()).toBe(3)
  })
})

describe('discovery', () => {
  it('lists the client authentication methods and the assertion algorithms', async () => {
    const doc = (await t.app.inject({ url: '/.well-known/openid-configuration' })).json()
    const methods = ['client_secret_basic', 'client_secret_post', 'none', 'client_secret_jwt', 'private_key_jwt']
    expect([...doc.token_endpoint_auth_methods_supported].sort()).toEqual([...methods].sort())
    expect([...doc.revocation_endpoint_auth_methods_supported].sort()).toEqual([...methods].sort())
    for (const m of ['token_endpoint_auth_signing_alg_values_supported', 'revocation_endpoint_auth_signing_alg_values_supported']) {
      expect(doc[m]).toEqual(expect.arrayContaining(['RS256', 'PS256', 'ES256', 'EdDSA', 'HS256']))
      expect(doc[m]).not.toContain('none')
    }
  })
})
