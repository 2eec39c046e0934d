// DPoP-bound tokens at userinfo (RFC 9449 §7): the DPoP scheme with a proof naming the token
// (ath), and the §7.1 challenges when a bound token comes as Bearer or the proof is missing or
// wrong; Bearer tokens as before. And the authorization endpoint's dpop_jkt (§10): the code is
// redeemed only with a proof of the key the request named.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, located, redeem, session, authorizeUrl } from '../authorization-code/harness.js'
import { dpopKey, proof, USERINFO_URL, type DPoPKey } from './proof.js'

const ALGS = 'ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA Ed25519'
const challenge = (error: string) => `DPoP error="${error}", algs="${ALGS}"`

let authz: TestApp
let key: DPoPKey
let alice: string
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      {
        clientId: 'pw',
        secrets: [{ value: 'pw-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'profile', 'orders.read'],
      },
      {
        clientId: 'pw-ref',
        secrets: [{ value: 'pw-ref-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'profile'],
        accessTokenType: 'reference' as const,
      },
    ],
  })
  key = await dpopKey()
  alice = await session(authz)
})
afterAll(() => authz?.close())

async function accessToken(opts: { dpop?: DPoPKey; client?: string; scope?: string } = {}): Promise<string> {
  const client = opts.client ?? 'pw'
  const res = await postForm(
    authz.app,
    '/connect/token',
    { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: opts.scope ?? 'openid profile' },
    { authorization: basic(client, `${client}-secret`), ...(opts.dpop ? { dpop: await proof(authz, opts.dpop) } : {}) },
  )
  expect(res.statusCode).toBe(200)
  return res.json().access_token as string
}
const userinfo = (headers: Record<string, string | string[]>, method: 'GET' | 'POST' = 'GET') =>
  authz.app.inject({ method, url: '/connect/userinfo', headers })

describe('userinfo with DPoP-bound tokens', () => {
  it('the DPoP scheme with a proof of the key naming the token: the claims', async () => {
    for (const client of ['pw', 'pw-ref']) {
      const at = await accessToken({ dpop: key, client })
      const res = await userinfo({
        authorization: `DPoP ${at}`,
        dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: at }),
      })
      expect(res.statusCode, client).toBe(200)
      expect(res.json(), client).toEqual({ sub: 'u-alice', name: 'Alice Example', family_name: 'Example' })
      expect(res.headers['cache-control']).toBe('no-store')
    }
  })

  it('POST works the same, with htm POST', async () => {
    const at = await accessToken({ dpop: key })
    const res = await userinfo(
      { authorization: `DPoP ${at}`, dpop: await proof(authz, key, { htm: 'POST', htu: USERINFO_URL, accessToken: at }) },
      'POST',
    )
    expect(res.statusCode).toBe(200)
  })

  it('a bound token sent as Bearer: 401 with a DPoP challenge naming invalid_token', async () => {
    const at = await accessToken({ dpop: key })
    const res = await userinfo({ authorization: `Bearer ${at}` })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe(challenge('invalid_token'))
    expect(res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'the access token is bound to a DPoP key: present it with the DPoP scheme',
    })
  })

  it('the DPoP scheme without a proof, with a replayed one, or one of the wrong token, URL or key: 401 invalid_dpop_proof', async () => {
    const at = await accessToken({ dpop: key })
    const good = await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: at })
    expect((await userinfo({ authorization: `DPoP ${at}`, dpop: good })).statusCode).toBe(200)
    const other = await dpopKey()
    const bad: Array<[string, Record<string, string>]> = [
      ['no proof', {}],
      ['replayed', { dpop: good }],
      ['ath of another token', { dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: 'another-token' }) }],
      ['no ath', { dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL }) }],
      ['the token endpoint URL', { dpop: await proof(authz, key, { htm: 'GET', accessToken: at }) }],
      ['another key', { dpop: await proof(authz, other, { htm: 'GET', htu: USERINFO_URL, accessToken: at }) }],
    ]
    for (const [name, headers] of bad) {
      const res = await userinfo({ authorization: `DPoP ${at}`, ...headers })
      expect(res.statusCode, name).toBe(401)
      expect(res.headers['www-authenticate'], name).toBe(challenge('invalid_dpop_proof'))
      expect(res.json().error, name).toBe('invalid_dpop_proof')
    }
  })

  it('a Bearer token stays a Bearer token: accepted as before, refused with the DPoP scheme', async () => {
    const at = await accessToken()
    expect(decodeJwt(at).cnf).toBeUndefined()
    expect((await userinfo({ authorization: `Bearer ${at}` })).statusCode).toBe(200)
    const res = await userinfo({
      authorization: `DPoP ${at}`,
      dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: at }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe(challenge('invalid_token'))
  })

  it('a bound token without openid: 403 insufficient_scope with the DPoP challenge', async () => {
    const at = await accessToken({ dpop: key, scope: 'orders.read' })
    const res = await userinfo({
      authorization: `DPoP ${at}`,
      dpop: await proof(authz, key, { htm: 'GET', htu: USERINFO_URL, accessToken: at }),
    })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(challenge('insufficient_scope'))
  })
})

describe('dpop_jkt at the authorization endpoint (§10)', () => {
  it('the code is redeemed only with a proof of the named key', async () => {
    const { code, verifier } = await codeFor(authz, alice, { dpop_jkt: key.jkt })
    const without = await redeem(authz, { code, code_verifier: verifier })
    expect(without.statusCode).toBe(400)
    expect(without.json()).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'a DPoP proof is required: the authorization code is bound to a key',
    })
    const other = await postForm(
      authz.app,
      '/connect/token',
      {
        grant_type: 'authorization_code',
        redirect_uri: 'https://web.example/cb',
        client_id: 'web',
        client_secret: 'web-secret',
        code,
        code_verifier: verifier,
      },
      { dpop: await proof(authz, await dpopKey()) },
    )
    expect(other.statusCode).toBe(400)
    expect(other.json().error).toBe('invalid_grant')
    // Neither consumed the code: the holder of the key redeems it.
    const ok = await postForm(
      authz.app,
      '/connect/token',
      {
        grant_type: 'authorization_code',
        redirect_uri: 'https://web.example/cb',
        client_id: 'web',
        client_secret: 'web-secret',
        code,
        code_verifier: verifier,
      },
      { dpop: await proof(authz, key) },
    )
    expect(ok.statusCode).toBe(200)
    expect(ok.json().token_type).toBe('DPoP')
    expect(decodeJwt(ok.json().access_token).cnf).toEqual({ jkt: key.jkt })
  })

  it('a dpop_jkt that is not a thumbprint goes back to the client as invalid_request', async () => {
    const res = await authz.app.inject({ method: 'GET', url: authorizeUrl({ dpop_jkt: 'not-a-thumbprint' }), headers: { cookie: alice } })
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(back.origin + back.pathname).toBe('https://web.example/cb')
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toBe('dpop_jkt is not a SHA-256 JWK thumbprint')
    expect(back.searchParams.get('state')).toBe('st-1')
  })
})
