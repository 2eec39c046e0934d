// login_hint_token (CIBA Core §7.1) signed by the client: a bounded lifetime (exp), our issuer as
// audience (aud), single use (jti), and never a request object (§7.1.1) passed off as one.
import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { BANK, createCibaTestApp, NO_STORE, signJwt, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { CIBA_MAX_PENDING_PER_USER: '0' } })
})
afterAll(() => authz.close())
beforeEach(async () => {
  await authz.db.query('DELETE FROM ciba_requests')
})

const hint = (claims: Record<string, unknown> = {}, opts: { lifetime?: number } = {}) =>
  signJwt(authz, authz.clientKey, { aud: TEST_ISSUER, jti: randomUUID(), sub: 'alice', ...claims }, opts)

async function start(loginHintToken: string) {
  return startCiba(authz, { ...BANK, scope: 'openid', login_hint_token: loginHintToken })
}

async function expectRefused(loginHintToken: string, description: string, error = 'invalid_request') {
  const res = await start(loginHintToken)
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: { error, error_description: description } })
  expect(res.headers).toMatchObject(NO_STORE)
}

describe('login_hint_token', () => {
  it('is accepted once with exp, aud and jti; a replay is refused', async () => {
    const token = await hint()
    const first = await start(token)
    expect(first.statusCode).toBe(200)
    await expectRefused(token, 'invalid login_hint_token: jti already used')
    // Even from another request that is otherwise different.
    const res = await startCiba(authz, { ...BANK, scope: 'openid email', binding_message: 'X1', login_hint_token: token })
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'invalid login_hint_token: jti already used' })
    const { rows } = await authz.db.query('SELECT subject_id FROM ciba_requests')
    expect(rows).toEqual([{ subject_id: 'u-alice' }])
  })

  it('refuses one with only sub, or without exp, aud or jti', async () => {
    const bare = await new SignJWT({ sub: 'alice' })
      .setProtectedHeader({ alg: 'ES256', kid: authz.clientKey.kid })
      .sign(authz.clientKey.privateKey)
    await expectRefused(bare, 'invalid login_hint_token: aud claim missing')
    const now = Math.floor(authz.clock.now() / 1000)
    const noExp = await new SignJWT({ sub: 'alice', aud: TEST_ISSUER, jti: randomUUID(), iat: now })
      .setProtectedHeader({ alg: 'ES256', kid: authz.clientKey.kid })
      .sign(authz.clientKey.privateKey)
    await expectRefused(noExp, 'invalid login_hint_token: exp claim missing')
    await expectRefused(await hint({ aud: undefined }), 'invalid login_hint_token: aud claim missing')
    await expectRefused(await hint({ aud: 'https://elsewhere.example' }), 'invalid login_hint_token: aud claim invalid')
    await expectRefused(await hint({ jti: undefined }), 'invalid login_hint_token: jti claim missing')
    await expectRefused(await hint({ jti: '' }), 'invalid login_hint_token: jti must be a non-empty string')
    await expectRefused(await hint({ jti: 'j\u0007' }), 'invalid login_hint_token: jti contains control characters')
    expect((await authz.db.query('SELECT count(*)::int AS n FROM ciba_requests')).rows).toEqual([{ n: 0 }])
  })

  it('refuses a lifetime over an hour, however it is stated, and answers an expired one with expired_login_hint_token', async () => {
    await expectRefused(await hint({}, { lifetime: 3601 + 60 }), 'invalid login_hint_token: lifetime over 3600 seconds')
    const now = Math.floor(authz.clock.now() / 1000)
    // No iat to measure from: the lifetime counts from now.
    const farExp = await new SignJWT({ sub: 'alice', aud: TEST_ISSUER, jti: randomUUID(), exp: now + 7200 })
      .setProtectedHeader({ alg: 'ES256', kid: authz.clientKey.kid })
      .sign(authz.clientKey.privateKey)
    await expectRefused(farExp, 'invalid login_hint_token: lifetime over 3600 seconds')
    const expired = await hint({}, { lifetime: 10 })
    authz.clock.advance(100)
    await expectRefused(expired, 'the login_hint_token has expired', 'expired_login_hint_token')
  })

  it('is never a signed request object, and a request object is never a login_hint_token', async () => {
    const object = { iss: 'bank', aud: TEST_ISSUER, scope: 'openid', login_hint: 'alice', binding_message: 'R1' }
    await expectRefused(
      await signJwt(authz, authz.clientKey, { ...object, jti: randomUUID() }),
      'invalid login_hint_token: a request object is not a login_hint_token',
    )
    const now = Math.floor(authz.clock.now() / 1000)
    const typed = await new SignJWT({ sub: 'alice', aud: TEST_ISSUER, jti: randomUUID(), iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: authz.clientKey.kid, typ: 'oauth-authz-req+jwt' })
      .sign(authz.clientKey.privateKey)
    await expectRefused(typed, 'invalid login_hint_token: a request object is not a login_hint_token')
    // The other way round: a login_hint_token as the request object.
    const res = await startCiba(authz, { ...BANK, request: await hint({ iss: 'bank' }) })
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'invalid request object: scope is required' })
    // One jti serves one JWT only, whichever kind it is first used as.
    const jti = randomUUID()
    expect((await startCiba(authz, { ...BANK, request: await signJwt(authz, authz.clientKey, { ...object, jti }) })).statusCode).toBe(200)
    await expectRefused(await hint({ jti }), 'invalid login_hint_token: jti already used')
  })
})
