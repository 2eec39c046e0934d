// CIBA Core §7.1.1 signed authentication request objects at POST /connect/ciba.
import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BANK, createCibaTestApp, NO_STORE, signJwt, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
})
afterAll(() => authz.close())

const claims = (extra: Record<string, unknown> = {}) => ({
  iss: 'bank',
  aud: TEST_ISSUER,
  jti: randomUUID(),
  scope: 'openid email',
  login_hint: 'alice',
  binding_message: 'R2D2',
  requested_expiry: 60,
  ...extra,
})

async function expectInvalid(params: Record<string, string>, description: string) {
  const res = await startCiba(authz, params)
  expect(res.statusCode).toBe(400)
  expect(res.headers).toMatchObject(NO_STORE)
  expect(res.json()).toEqual({ error: 'invalid_request', error_description: description })
}

describe('signed request objects', () => {
  it('accepts a valid object and takes every parameter from it', async () => {
    const res = await startCiba(authz, { ...BANK, request: await signJwt(authz, authz.clientKey, claims()) })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ expires_in: 60, interval: 5 })
    const { rows } = await authz.db.query('SELECT subject_id, requested_scopes, binding_message FROM ciba_requests')
    expect(rows).toEqual([{ subject_id: 'u-alice', requested_scopes: ['openid', 'email'], binding_message: 'R2D2' }])
  })

  it('refuses a replayed jti', async () => {
    const jwt = await signJwt(authz, authz.clientKey, claims())
    expect((await startCiba(authz, { ...BANK, request: jwt })).statusCode).toBe(200)
    await expectInvalid({ ...BANK, request: jwt }, 'invalid request object: jti already used')
  })

  it('refuses a bad signature, a foreign key, HS256 and an unsigned object', async () => {
    const jwt = await signJwt(authz, authz.clientKey, claims())
    const [h, p, s] = jwt.split('.')
    const flipped = `${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`
    await expectInvalid({ ...BANK, request: flipped }, 'invalid request object: signature verification failed')
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.otherKey, claims()) },
      'invalid request object: no registered key matches',
    )
    const hs = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setNotBefore('0s')
      .setExpirationTime('1m')
      .sign(new TextEncoder().encode('bank-secret-bank-secret-bank-secret!'))
    await expectInvalid({ ...BANK, request: hs }, 'invalid request object: algorithm not allowed (use ES256, PS256 or RS256)')
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`
    await expectInvalid({ ...BANK, request: none }, 'invalid request object: algorithm not allowed (use ES256, PS256 or RS256)')
  })

  it('refuses a parameter outside the object', async () => {
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims()), scope: 'openid' },
      'with a request object, scope must be inside it, not outside',
    )
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims()), login_hint: 'alice' },
      'with a request object, login_hint must be inside it, not outside',
    )
  })

  it('requires iss = client_id, aud = issuer, exp, iat, nbf and jti', async () => {
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims({ iss: 'plain' })) },
      'invalid request object: iss must be the client_id',
    )
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims({ aud: 'https://elsewhere' })) },
      'invalid request object: aud claim invalid',
    )
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims({ jti: undefined })) },
      'invalid request object: jti claim missing',
    )
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims({ nbf: undefined })) },
      'invalid request object: nbf claim missing',
    )
    const old = await signJwt(authz, authz.clientKey, claims(), { lifetime: 10 })
    authz.clock.advance(60)
    await expectInvalid({ ...BANK, request: old }, 'invalid request object: expired')
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims(), { lifetime: 7200 }) },
      'invalid request object: lifetime over 3600 seconds',
    )
  })

  it('still applies the CIBA checks to the parameters inside', async () => {
    const res = await startCiba(authz, {
      ...BANK,
      request: await signJwt(authz, authz.clientKey, claims({ binding_message: 'x'.repeat(65) })),
    })
    expect(res.json()).toEqual({ error: 'invalid_binding_message', error_description: 'binding_message is longer than 64 characters' })
    await expectInvalid(
      { ...BANK, request: await signJwt(authz, authz.clientKey, claims({ login_hint: 42 })) },
      'invalid request object: login_hint must be a string',
    )
  })

  it('refuses an object for a client without registered keys', async () => {
    await expectInvalid(
      { client_id: 'plain', client_secret: 'plain-secret', request: await signJwt(authz, authz.clientKey, claims({ iss: 'plain' })) },
      'invalid request object: the client has no registered public keys',
    )
  })
})
