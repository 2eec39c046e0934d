// The device_code grant at POST /connect/token (RFC 8628 §3.4-3.5): the polling rules shared with
// CIBA (authorization_pending, slow_down with the interval stored in the database, expired_token,
// access_denied), the tokens, single use under concurrency and the revocation of a second use,
// and every error with its status and code.
import { createHash } from 'node:crypto'
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CIBA_RETENTION_SECONDS, createCleanup } from '../../../src/jobs/cleanup.js'
import { createPgDeviceAuthorizationStore } from '../../../src/stores/device-authorizations.postgres.js'
import { basic, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { applySeed } from '../../../src/seed/apply.js'
import { CONSOLE, createDeviceTestApp, decide, DEVICE, deviceSeed, NO_STORE, poll, start, TV, type Started } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp()
})
afterAll(() => authz.close())

async function expectPollError(
  deviceCode: string,
  error: string,
  description?: string,
  client: Record<string, string> = TV,
  headers: Record<string, string> = {},
) {
  const res = await poll(authz, deviceCode, client, headers)
  expect(res.headers).toMatchObject(NO_STORE)
  expect({ status: res.statusCode, body: res.json() }).toEqual({
    status: 400,
    body: { error, ...(description ? { error_description: description } : {}) },
  })
}

const API = { client_id: 'orders-api', client_secret: 'api-secret' }
const active = async (token: string) => (await postForm(authz.app, '/connect/introspect', { ...API, token })).json().active as boolean
const refresh = (refreshToken: string) =>
  postForm(authz.app, '/connect/token', { ...TV, grant_type: 'refresh_token', refresh_token: refreshToken })

async function approved(scope = 'openid profile orders.read offline_access'): Promise<Started> {
  const s = await start(authz, { ...TV, scope })
  await decide(authz, s.user_code, 'approve')
  return s
}

describe('device_code grant', () => {
  it('pending, then slow_down with a persisted, growing interval measured from the last accepted poll', async () => {
    const s = await start(authz)
    await expectPollError(s.device_code, 'authorization_pending')
    await expectPollError(s.device_code, 'slow_down', 'poll at most every 10 seconds')
    authz.clock.advance(6)
    await expectPollError(s.device_code, 'slow_down', 'poll at most every 15 seconds')
    authz.clock.advance(9)
    await expectPollError(s.device_code, 'authorization_pending')
    const { rows } = await authz.db.query(
      'SELECT interval_seconds FROM device_authorizations WHERE client_id = $1 AND last_polled_at IS NOT NULL',
      ['tv'],
    )
    expect(rows).toEqual([{ interval_seconds: 15 }])
  })

  it('after approval: access, ID and refresh tokens for the user who approved, with the sign-in auth_time and amr', async () => {
    const s = await start(authz)
    await expectPollError(s.device_code, 'authorization_pending')
    const signedInAt = Math.floor(authz.clock.now() / 1000)
    await decide(authz, s.user_code, 'approve')
    authz.clock.advance(5)
    const res = await poll(authz, s.device_code)
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject(NO_STORE)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid profile orders.read offline_access' })
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const opts = { issuer: TEST_ISSUER, currentDate: new Date(authz.clock.now()) }
    const { payload: id } = await jwtVerify(body.id_token, jwks, { ...opts, audience: 'tv' })
    expect(id).toMatchObject({ sub: 'u-alice', auth_time: signedInAt, amr: ['pwd'], name: 'Alice Example' })
    const { payload: at } = await jwtVerify(body.access_token, jwks, opts)
    expect(at).toMatchObject({
      sub: 'u-alice',
      client_id: 'tv',
      aud: 'orders-api',
      scope: 'openid profile orders.read offline_access',
      auth_time: signedInAt,
    })
    expect((await refresh(body.refresh_token)).statusCode).toBe(200)
  })

  it('a client with alwaysIncludeUserClaimsInIdToken false: the ID token carries the protocol claims only', async () => {
    await applySeed(authz.db, {
      clients: [{ ...deviceSeed.clients[0]!, clientId: 'quiet-tv', allowedCorsOrigins: [], alwaysIncludeUserClaimsInIdToken: false }],
    })
    const s = await start(authz, { client_id: 'quiet-tv', scope: 'openid profile' })
    await decide(authz, s.user_code, 'approve')
    authz.clock.advance(5)
    const res = await poll(authz, s.device_code, { client_id: 'quiet-tv' })
    expect(res.statusCode).toBe(200)
    const id = decodeJwt(res.json().id_token)
    expect(Object.keys(id).sort()).toEqual(['amr', 'at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'sub'])
    expect(id).toMatchObject({ sub: 'u-alice', aud: 'quiet-tv' })
  })

  it('a confidential client polls with its credentials; without offline_access there is no refresh token', async () => {
    const s = await start(authz, { scope: 'orders.read' }, CONSOLE)
    await decide(authz, s.user_code, 'approve', { username: 'bob', password: 'bob-pw' })
    const res = await poll(authz, s.device_code, {}, CONSOLE)
    expect(res.statusCode).toBe(200)
    expect(Object.keys(res.json()).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type'])
    authz.clock.advance(3) // past the grace for a poll in flight at the redemption
    await expectPollError(s.device_code, 'invalid_grant', 'device_code already used', {}, CONSOLE)
  })

  it('access_denied after the user denies', async () => {
    const s = await start(authz)
    await decide(authz, s.user_code, 'deny')
    await expectPollError(s.device_code, 'access_denied', 'the user denied the request')
  })

  it('expired_token after the lifetime, also for a too-fast poll; cleanup removes it only 5 minutes later', async () => {
    const s = await start(authz)
    await expectPollError(s.device_code, 'authorization_pending')
    authz.clock.advance(300)
    await expectPollError(s.device_code, 'expired_token', 'the device_code has expired')
    await expectPollError(s.device_code, 'expired_token', 'the device_code has expired')
    const cleanup = createCleanup({
      clock: authz.clock,
      logger: { info: () => {}, warn: () => {} },
      batchSize: 50,
      tasks: [
        { name: 'devices', remove: createPgDeviceAuthorizationStore(authz.db).removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS },
      ],
    })
    authz.clock.advance(299)
    await cleanup.runOnce()
    await expectPollError(s.device_code, 'expired_token', 'the device_code has expired')
    authz.clock.advance(2)
    expect((await cleanup.runOnce()).devices).toBeGreaterThanOrEqual(1)
    await expectPollError(s.device_code, 'invalid_grant', 'unknown device_code')
  })

  it("an unknown device_code, or another client's: invalid_grant", async () => {
    await expectPollError('x'.repeat(43), 'invalid_grant', 'unknown device_code')
    const s = await approved()
    await expectPollError(s.device_code, 'invalid_grant', 'unknown device_code', { client_id: 'other-tv' })
    // The rightful client still gets its tokens: the other's attempt changed nothing.
    expect((await poll(authz, s.device_code)).statusCode).toBe(200)
  })

  it('a missing or over-long device_code: invalid_request; a client without the grant: unauthorized_client', async () => {
    const missing = await postForm(authz.app, '/connect/token', { ...TV, grant_type: DEVICE })
    expect({ status: missing.statusCode, body: missing.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'device_code is missing or invalid' },
    })
    const long = await poll(authz, 'x'.repeat(300))
    expect({ status: long.statusCode, error: long.json().error }).toEqual({ status: 400, error: 'invalid_request' })
    const s = await start(authz)
    const cc = await poll(authz, s.device_code, {}, { authorization: basic('cc-only', 'cc-secret') })
    expect({ status: cc.statusCode, body: cc.json() }).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: 'the client may not use this grant type' },
    })
  })

  it('a user disabled since the approval gets nothing: invalid_grant', async () => {
    const s = await start(authz, { ...TV, scope: 'openid' })
    await decide(authz, s.user_code, 'approve', { username: 'bob', password: 'bob-pw' })
    await authz.db.query('UPDATE users SET enabled = false WHERE subject_id = $1', ['u-bob'])
    try {
      await expectPollError(s.device_code, 'invalid_grant', 'the user is no longer active')
    } finally {
      await authz.db.query('UPDATE users SET enabled = true WHERE subject_id = $1', ['u-bob'])
    }
  })

  it('used once: a second use is invalid_grant and revokes everything the first issued', async () => {
    const s = await approved()
    const first = await poll(authz, s.device_code)
    expect(first.statusCode).toBe(200)
    const tokens = first.json()
    expect(await active(tokens.access_token)).toBe(true)
    authz.clock.advance(5) // past the grace for a poll in flight at the redemption
    await expectPollError(s.device_code, 'invalid_grant', 'device_code already used')
    expect(await active(tokens.access_token)).toBe(false)
    const r = await refresh(tokens.refresh_token)
    expect({ status: r.statusCode, error: r.json().error }).toEqual({ status: 400, error: 'invalid_grant' })
  })

  it('10 concurrent redemptions of one approved device code: exactly one token response (20 trials)', async () => {
    for (let trial = 0; trial < 20; trial++) {
      const s = await approved('openid orders.read offline_access')
      const results = await Promise.all(Array.from({ length: 10 }, () => poll(authz, s.device_code)))
      const ok = results.filter((r) => r.statusCode === 200)
      expect(ok).toHaveLength(1)
      for (const r of results.filter((x) => x.statusCode !== 200)) {
        expect(r.statusCode).toBe(400)
        expect(['slow_down', 'invalid_grant']).toContain(r.json().error)
      }
      const { rows } = await authz.db.query<{ n: string | number }>(
        `SELECT count(*) AS n FROM persisted_grants g JOIN device_authorizations d ON d.family_id = g.family_id
          WHERE g.kind = 'refresh_token' AND d.device_code_hash = $1`,
        [createHash('sha256').update(s.device_code).digest('base64url')],
      )
      expect(Number(rows[0]!.n)).toBeLessThanOrEqual(1)
      authz.clock.advance(10)
    }
  })
})

describe('device authorization store', () => {
  it('refuses a second request with a user code already stored (the service then draws another)', async () => {
    const store = createPgDeviceAuthorizationStore(authz.db)
    const base = {
      clientId: 'tv',
      requestedScopes: ['openid'],
      intervalSeconds: 5,
      createdAt: authz.clock.now(),
      expiresAt: authz.clock.now() + 300_000,
    }
    expect(await store.create({ ...base, id: 'dup-1', deviceCode: 'device-code-1', userCode: 'ZZZZZZZZ', familyId: 'f-dup-1' })).toBe(true)
    expect(await store.create({ ...base, id: 'dup-2', deviceCode: 'device-code-2', userCode: 'ZZZZZZZZ', familyId: 'f-dup-2' })).toBe(false)
    expect((await store.findByUserCode('ZZZZZZZZ'))?.id).toBe('dup-1')
  })

  it('of 10 concurrent consumes of an approved request, exactly one wins (20 trials)', async () => {
    const store = createPgDeviceAuthorizationStore(authz.db)
    for (let trial = 0; trial < 20; trial++) {
      const s = await approved('openid')
      const found = await store.findByUserCode(s.user_code.replace('-', ''))
      const won = await Promise.all(Array.from({ length: 10 }, () => store.consume(found!.id, authz.clock.now())))
      expect(won.filter((w) => w !== undefined)).toHaveLength(1)
    }
  })
})
