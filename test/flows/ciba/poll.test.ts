// The CIBA grant at POST /connect/token (CIBA Core §10.1, §11): poll order, persisted slow_down,
// approval and denial, expiry and cleanup, single use under concurrency, replay revocation.
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { CIBA_RETENTION_SECONDS, createCleanup } from '../../../src/jobs/cleanup.js'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import { decide, lastRequestId } from './approve-helper.js'
import { BANK, CIBA, createCibaTestApp, NO_STORE, poll, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
})
afterAll(() => authz.close())

async function start(params: Record<string, string> = {}) {
  const res = await startCiba(authz, { ...BANK, scope: 'openid profile email orders.read offline_access', login_hint: 'alice', ...params })
  expect(res.statusCode).toBe(200)
  return { authReqId: res.json().auth_req_id as string, requestId: await lastRequestId(authz) }
}

async function expectPollError(authReqId: string, error: string, description?: string) {
  const res = await poll(authz, authReqId)
  expect(res.headers).toMatchObject(NO_STORE)
  expect({ status: res.statusCode, body: res.json() }).toEqual({
    status: 400,
    body: { error, ...(description ? { error_description: description } : {}) },
  })
}

describe('CIBA token grant', () => {
  it('pending, then slow_down with a persisted, growing interval measured from the last accepted poll', async () => {
    const { authReqId, requestId } = await start()
    await expectPollError(authReqId, 'authorization_pending') // first poll: never slow_down
    await expectPollError(authReqId, 'slow_down', 'poll at most every 10 seconds')
    authz.clock.advance(6)
    await expectPollError(authReqId, 'slow_down', 'poll at most every 15 seconds') // 6 s < 10 s
    authz.clock.advance(9) // 15 s after the accepted poll
    await expectPollError(authReqId, 'authorization_pending')
    const { rows } = await authz.db.query('SELECT interval_seconds FROM ciba_requests WHERE id = $1', [requestId])
    expect(rows).toEqual([{ interval_seconds: 15 }])
  })

  it('issues tokens once after approval, with tenant, idp and acr, verified against the JWKS', async () => {
    // idp:local: the approval's sign-in is the password form only (idp:corp-ad would send it to that provider).
    const { authReqId, requestId } = await start({ acr_values: 'tenant:acme idp:local 1 urn:unknown' })
    await expectPollError(authReqId, 'authorization_pending')
    authz.clock.advance(2)
    const approvedAt = Math.floor(authz.clock.now() / 1000)
    const done = await decide(authz, requestId, 'approve')
    expect(done.statusCode).toBe(200)
    expect(done.body).toContain('You approved the request from Bank &lt;App&gt;.')
    authz.clock.advance(5)
    const res = await poll(authz, authReqId)
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject(NO_STORE)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid profile email orders.read offline_access' })
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const { payload: id } = await jwtVerify(body.id_token, jwks, {
      issuer: TEST_ISSUER,
      audience: 'bank',
      currentDate: new Date(authz.clock.now()),
    })
    expect(id).toMatchObject({
      sub: 'u-alice',
      auth_time: approvedAt,
      acr: '1',
      amr: ['pwd'],
      tenant: 'acme',
      idp: 'local',
      name: 'Alice Example',
      email: 'alice@example.com',
      at_hash: expect.any(String),
    })
    const { payload: at } = await jwtVerify(body.access_token, jwks, {
      issuer: TEST_ISSUER,
      audience: 'orders-api',
      currentDate: new Date(authz.clock.now()),
    })
    expect(at).toMatchObject({ sub: 'u-alice', client_id: 'bank', tenant: 'acme', idp: 'local', acr: '1', auth_time: approvedAt })
    const { rows } = await authz.db.query(
      'SELECT status, approved_scopes, consumed_at IS NOT NULL AS consumed FROM ciba_requests WHERE id = $1',
      [requestId],
    )
    expect(rows).toEqual([
      { status: 'approved', approved_scopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'], consumed: true },
    ])

    // Replay: invalid_grant, and everything issued from the request is revoked.
    authz.clock.advance(10)
    const family = (await authz.db.query<{ family_id: string }>('SELECT family_id FROM ciba_requests WHERE id = $1', [requestId])).rows[0]!
      .family_id
    expect((await authz.db.query('SELECT kind FROM persisted_grants WHERE family_id = $1 ORDER BY kind', [family])).rows).toEqual([
      { kind: 'jwt_access_token' },
      { kind: 'refresh_token' },
    ])
    await expectPollError(authReqId, 'invalid_grant', 'auth_req_id already used')
    // Nothing secret reaches the logs: handles, tokens, passwords, session cookies.
    const logText = authz.logs.join('\n')
    for (const secret of [authReqId, body.access_token, body.refresh_token, body.id_token, 'alice-pw', 'bank-secret']) {
      expect(logText).not.toContain(secret)
    }
    expect((await authz.db.query('SELECT 1 FROM persisted_grants WHERE family_id = $1', [family])).rows).toEqual([])
    expect((await authz.db.query('SELECT jti FROM revoked_tokens WHERE jti = $1', [at.jti])).rows).toEqual([{ jti: at.jti }])
  })

  it("a client with alwaysIncludeUserClaimsInIdToken false: the ID token carries the protocol claims and the sign-in's only", async () => {
    await applySeed(authz.db, {
      clients: [
        {
          clientId: 'quiet-bank',
          secrets: [{ value: 'quiet-secret' }],
          allowedGrantTypes: [CIBA],
          allowedScopes: ['openid', 'profile', 'email'],
          allowedTenants: ['acme'],
          alwaysIncludeUserClaimsInIdToken: false,
        },
      ],
    })
    const quiet = { client_id: 'quiet-bank', client_secret: 'quiet-secret' }
    const res = await startCiba(authz, { ...quiet, scope: 'openid profile email', login_hint: 'alice', acr_values: 'tenant:acme' })
    expect(res.statusCode).toBe(200)
    expect((await decide(authz, await lastRequestId(authz), 'approve')).statusCode).toBe(200)
    const tokens = await poll(authz, res.json().auth_req_id, quiet)
    expect(tokens.statusCode).toBe(200)
    const id = decodeJwt(tokens.json().id_token)
    expect(Object.keys(id).sort()).toEqual(['amr', 'at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'sub', 'tenant'])
    expect(id).toMatchObject({ sub: 'u-alice', aud: 'quiet-bank', tenant: 'acme' })
  })

  it('gives exactly one token response to 10 concurrent polls after approval', async () => {
    const { authReqId, requestId } = await start({ scope: 'openid' })
    expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
    const results = await Promise.all(Array.from({ length: 10 }, () => poll(authz, authReqId)))
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1)
    for (const r of results.filter((x) => x.statusCode !== 200)) expect(r.json().error).toBe('slow_down')
    // Overlapping polls are too fast, not replays: the tokens issued stay valid.
    const { rows } = await authz.db.query(
      'SELECT count(*)::int AS n FROM persisted_grants g JOIN ciba_requests r ON r.family_id = g.family_id WHERE r.id = $1',
      [requestId],
    )
    expect(rows).toEqual([{ n: 1 }])
  })

  it('answers access_denied after denial', async () => {
    const { authReqId, requestId } = await start()
    const done = await decide(authz, requestId, 'deny')
    expect(done.body).toContain('You denied the request')
    await expectPollError(authReqId, 'access_denied', 'the user denied the request')
  })

  it('answers expired_token after expiry, still after a while, and cleanup removes it only 5 minutes later', async () => {
    const { authReqId, requestId } = await start({ requested_expiry: '30' })
    authz.clock.advance(30)
    await expectPollError(authReqId, 'expired_token', 'the request has expired')
    await expectPollError(authReqId, 'expired_token', 'the request has expired') // no slow_down after expiry
    const cleanup = createCleanup({
      clock: authz.clock,
      logger: { info: () => {}, warn: () => {} },
      batchSize: 2,
      tasks: [{ name: 'requests', remove: createPgCibaRequestStore(authz.db).removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS }],
    })
    authz.clock.advance(299)
    await cleanup.runOnce()
    await expectPollError(authReqId, 'expired_token', 'the request has expired')
    authz.clock.advance(2)
    expect((await cleanup.runOnce()).requests).toBeGreaterThanOrEqual(1)
    expect((await authz.db.query('SELECT 1 FROM ciba_requests WHERE id = $1', [requestId])).rows).toEqual([])
    await expectPollError(authReqId, 'invalid_grant', 'unknown auth_req_id')
  })

  it('refuses an approval after expiry on the page', async () => {
    const { requestId } = await start({ requested_expiry: '10' })
    authz.clock.advance(11)
    const page = await authz.app.inject({ method: 'GET', url: `/ciba/approve?request=${requestId}` })
    expect(page.statusCode).toBe(410)
    expect(page.body).toContain('This request has expired')
  })

  it('unknown, other client, missing auth_req_id', async () => {
    const { authReqId } = await start({ scope: 'openid' })
    await expectPollError('x'.repeat(43), 'invalid_grant', 'unknown auth_req_id')
    const other = await poll(authz, authReqId, { client_id: 'plain', client_secret: 'plain-secret' })
    expect(other.json()).toEqual({ error: 'invalid_grant', error_description: 'unknown auth_req_id' })
    const missing = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...BANK, grant_type: 'urn:openid:params:grant-type:ciba' }).toString(),
    })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toBe('invalid_request')
    // The request id of the approval URL is not an auth_req_id.
    await expectPollError(await lastRequestId(authz), 'invalid_grant', 'unknown auth_req_id')
  })
})
