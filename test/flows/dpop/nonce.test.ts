// Server nonces (RFC 9449 §8, §9) with DPOP_NONCE_REQUIRED: a proof without the nonce is answered
// use_dpop_nonce with a DPoP-Nonce to retry with (400 at the token endpoint, 401 with a DPoP
// challenge at userinfo); a nonce from another replica's secret or from long ago is refused.
// And openid-client (v6) doing client_credentials with DPoP, retrying on the nonce by itself.
import * as client from 'openid-client'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import { systemClock } from '../../../src/domain/clock.js'
import { createLogger } from '../../../src/http/logger.js'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, testConfig, type TestApp } from '../../helpers/app.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'
import { freePort } from '../../helpers/free-port.js'
import { postForm } from '../../helpers/http.js'
import { dpopKey, proof, USERINFO_URL, type DPoPKey } from './proof.js'

const SEED = {
  apiScopes: [{ name: 'orders.read' }],
  apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'api-secret' }] }],
  identityResources: ['openid', 'profile'],
  clients: [
    {
      clientId: 'svc',
      secrets: [{ value: 'svc-secret' }],
      allowedGrantTypes: ['client_credentials', 'password'],
      allowedScopes: ['orders.read', 'openid'],
    },
  ],
  users: [{ subjectId: 'u-alice', username: 'alice', password: 'alice-pw' }],
}

let authz: TestApp
let key: DPoPKey
beforeAll(async () => {
  authz = await createTestApp({ env: { DPOP_NONCE_REQUIRED: 'true' } })
  await applySeed(authz.db, SEED)
  key = await dpopKey()
})
afterAll(() => authz?.close())

const cc = async (dpop: string) =>
  postForm(
    authz.app,
    '/connect/token',
    { grant_type: 'client_credentials', scope: 'orders.read' },
    { authorization: basic('svc', 'svc-secret'), dpop },
  )

describe('DPoP nonces', () => {
  it('token endpoint: use_dpop_nonce with a DPoP-Nonce, then the retry with it succeeds and carries the next one', async () => {
    const first = await cc(await proof(authz, key))
    expect(first.statusCode).toBe(400)
    expect(first.headers['cache-control']).toBe('no-store')
    expect(first.json()).toEqual({
      error: 'use_dpop_nonce',
      error_description: 'the DPoP proof must carry the nonce of the DPoP-Nonce header',
    })
    const nonce = first.headers['dpop-nonce'] as string
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{30}$/)
    const retry = await cc(await proof(authz, key, { nonce }))
    expect(retry.statusCode).toBe(200)
    expect(retry.json().token_type).toBe('DPoP')
    expect(retry.headers['dpop-nonce']).toBe(nonce)
  })

  it('a nonce lives 5 to 10 minutes by the clock; a forged one is never accepted', async () => {
    const nonce = (await cc(await proof(authz, key))).headers['dpop-nonce'] as string
    authz.clock.advance(300)
    const later = await cc(await proof(authz, key, { nonce }))
    expect(later.json().token_type).toBe('DPoP')
    authz.clock.advance(300)
    const stale = await cc(await proof(authz, key, { nonce }))
    expect(stale.json().error).toBe('use_dpop_nonce')
    expect(stale.headers['dpop-nonce']).not.toBe(nonce)
    const forged = `${nonce.slice(0, 8)}${'A'.repeat(22)}`
    expect((await cc(await proof(authz, key, { nonce: forged }))).json().error).toBe('use_dpop_nonce')
  })

  it('userinfo: 401 with WWW-Authenticate DPoP error="use_dpop_nonce" and a DPoP-Nonce', async () => {
    const nonce = (await cc(await proof(authz, key))).headers['dpop-nonce'] as string
    const tokenRes = await postForm(
      authz.app,
      '/connect/token',
      { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid' },
      { authorization: basic('svc', 'svc-secret'), dpop: await proof(authz, key, { nonce }) },
    )
    const at = tokenRes.json().access_token as string
    const get = async (n?: string) =>
      authz.app.inject({
        method: 'GET',
        url: '/connect/userinfo',
        headers: {
          authorization: `DPoP ${at}`,
          dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: at, ...(n ? { nonce: n } : {}) }),
        },
      })
    const res = await get()
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce", algs="ES256 /)
    expect(res.headers['dpop-nonce']).toBe(nonce)
    const ok = await get(res.headers['dpop-nonce'] as string)
    expect(ok.statusCode).toBe(200)
    expect(ok.json()).toEqual({ sub: 'u-alice' })
  })
})

describe('openid-client with DPoP', () => {
  let testDb: TestDb
  let app: Awaited<ReturnType<typeof buildApp>>
  let issuer: URL
  beforeAll(async () => {
    testDb = await createTestDb()
    const port = await freePort() // the issuer must be the listening address
    const config = testConfig({ ISSUER: `http://127.0.0.1:${port}`, DPOP_NONCE_REQUIRED: 'true' })
    app = await buildApp({ config, db: testDb.db, clock: systemClock, logger: createLogger({ level: 'silent' }) })
    await applySeed(testDb.db, SEED)
    await app.listen({ port, host: '127.0.0.1' })
    issuer = new URL(config.issuer)
  })
  afterAll(async () => {
    await app?.close()
    await testDb?.close()
  })

  it('client_credentials through getDPoPHandle: a DPoP-bound token, the nonce round trip done by the library', async () => {
    const config = await client.discovery(issuer, 'svc', 'svc-secret', client.ClientSecretBasic('svc-secret'), {
      execute: [client.allowInsecureRequests],
    })
    const keyPair = await client.randomDPoPKeyPair('ES256')
    const DPoP = client.getDPoPHandle(config, keyPair)
    const tokens = await client.clientCredentialsGrant(config, { scope: 'orders.read' }, { DPoP })
    expect(tokens.token_type).toBe('dpop')
    const { calculateJwkThumbprint, exportJWK } = await import('jose')
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) })
    const intro = await client.tokenIntrospection(
      await client.discovery(issuer, 'orders-api', 'api-secret', client.ClientSecretBasic('api-secret'), {
        execute: [client.allowInsecureRequests],
      }),
      tokens.access_token,
    )
    expect(intro).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: expect.any(String) } })
  })
})
