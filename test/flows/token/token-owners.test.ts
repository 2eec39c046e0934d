// A token is only as alive as the client it was issued to and the user it speaks for: once either is
// disabled or deleted, every place that judges a token says so, as Duende does (client enabled,
// IProfileService.IsActive). Introspection answers {"active":false} (RFC 7662 §2.2), in JSON and
// as an RFC 9701 JWT; userinfo 401 invalid_token (RFC 6750 §3.1); token exchange refuses the
// subject or actor token (RFC 8693 §2.2.2); the refresh grant invalid_grant (RFC 6749 §5.2).
// Re-enabling brings the tokens back: it is a check at use, not a revocation.
// The app runs with a client cache, as in production: the change is made in the database (as
// the CLI or another replica does) and seen at once, its NOTIFY dropping the cache (migration
// 0031), without the clock moving; CLIENT_CACHE_TTL bounds only a missed notification.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'

const TTL = 5
const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'
const USER_SCOPE = 'openid profile orders.read offline_access'

const userClient = (clientId: string, accessTokenType: 'jwt' | 'reference' = 'jwt') => ({
  clientId,
  secrets: [{ value: `${clientId}-secret` }],
  allowedGrantTypes: ['password'],
  accessTokenType,
  allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
  allowOfflineAccess: true,
})
const user = (username: string) => ({ subjectId: `sub-${username}`, username, password: `${username}-pw`, claims: { name: username } })

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp({ env: { CLIENT_CACHE_TTL: String(TTL) } })
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'offline_access'],
    clients: [
      userClient('web'),
      userClient('web-ref', 'reference'),
      userClient('web-off'),
      userClient('web-gone', 'reference'),
      userClient('web-ref-u', 'reference'),
      userClient('gil'),
      { clientId: 'svc', secrets: [{ value: 'svc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
      {
        clientId: 'gateway',
        secrets: [{ value: 'gateway-secret' }],
        allowedGrantTypes: [TE],
        allowedScopes: ['openid', 'profile', 'orders.read'],
        allowedSubjectTokenClients: ['web', 'web-ref', 'web-off', 'web-gone', 'web-ref-u', 'gil', 'svc'],
        allowedExchangeAudiences: ['orders-api'],
      },
    ],
    users: [user('carol'), user('dora'), user('erin'), user('fay'), { ...user('gil'), subjectId: 'gil' }],
  })
})
afterAll(() => authz?.close())

const as = (clientId: string) => ({ authorization: basic(clientId, `${clientId}-secret`) })

async function passwordTokens(clientId: string, username: string) {
  const res = await postForm(
    authz.app,
    '/connect/token',
    { grant_type: 'password', username, password: `${username}-pw`, scope: USER_SCOPE },
    as(clientId),
  )
  expect(res.statusCode).toBe(200)
  return res.json<{ access_token: string; refresh_token: string }>()
}
async function serviceToken(): Promise<string> {
  const res = await postForm(authz.app, '/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, as('svc'))
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}
const sql = (text: string) => authz.db.query(text)
/** As the CLI on another process (or another replica) changes it: this app hears of it within the TTL. */
const afterTtl = () => authz.clock.advance(TTL)
/** The change's notification reaches the app's caches: within a second of real time, the clock still. */
async function seenAtOnce(token: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if ((await introspect(token)).active === false) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return false
}

const introspect = async (token: string, caller = { authorization: basic('orders-api', 'orders-secret') }) => {
  const res = await postForm(authz.app, '/connect/introspect', { token }, caller)
  return res.statusCode === 200 ? res.json() : { status: res.statusCode, ...res.json() }
}
/** RFC 9701: the token_introspection member of the signed answer. */
const introspectAsJwt = async (token: string) => {
  const res = await postForm(
    authz.app,
    '/connect/introspect',
    { token },
    { authorization: basic('orders-api', 'orders-secret'), accept: 'application/token-introspection+jwt' },
  )
  expect(res.headers['content-type']).toBe('application/token-introspection+jwt')
  return decodeJwt(res.body).token_introspection
}
const userinfo = async (token: string) => {
  const res = await authz.app.inject({ method: 'GET', url: '/connect/userinfo', headers: { authorization: `Bearer ${token}` } })
  return { status: res.statusCode, challenge: res.headers['www-authenticate'], body: res.json() }
}
const exchange = async (params: Record<string, string>) => {
  const res = await postForm(
    authz.app,
    '/connect/token',
    { grant_type: TE, subject_token_type: AT, ...params, ...(params.actor_token ? { actor_token_type: AT } : {}) },
    as('gateway'),
  )
  return { status: res.statusCode, body: res.json() }
}

/** Every place an access token is judged, summed up. */
async function judged(token: string) {
  const live = (await passwordTokens('web', 'carol')).access_token
  const [json, jwt, info, subject, actor] = [
    await introspect(token),
    await introspectAsJwt(token),
    await userinfo(token),
    await exchange({ subject_token: token }),
    await exchange({ subject_token: live, actor_token: token }),
  ]
  return {
    introspection: json.active === true ? 'active' : json,
    jwtIntrospection: (jwt as { active?: unknown }).active === true ? 'active' : jwt,
    userinfo: info.status === 200 ? 'claims' : info,
    asSubject: subject.status === 200 ? 'exchanged' : subject,
    asActor: actor.status === 200 ? 'exchanged' : actor,
  }
}
const ALIVE = { introspection: 'active', jwtIntrospection: 'active', userinfo: 'claims', asSubject: 'exchanged', asActor: 'exchanged' }
const refused = (param: string) => ({
  status: 400,
  body: { error: 'invalid_request', error_description: `${param} is not an active access token of this server` },
})
const DEAD = {
  introspection: { active: false },
  jwtIntrospection: { active: false },
  userinfo: {
    status: 401,
    challenge: `Bearer realm="${TEST_ISSUER}", error="invalid_token"`,
    body: { error: 'invalid_token', error_description: 'the access token is not valid' },
  },
  asSubject: refused('subject_token'),
  asActor: refused('actor_token'),
}

const refresh = async (clientId: string, token: string) => {
  const res = await postForm(authz.app, '/connect/token', { grant_type: 'refresh_token', refresh_token: token }, as(clientId))
  return { status: res.statusCode, body: res.json() }
}
const INVALID_CLIENT = { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } }

describe('tokens of a disabled or deleted client', () => {
  it('a disabled client: its JWT and reference tokens are inactive everywhere within the TTL, and alive again once it is enabled', async () => {
    const jwt = await passwordTokens('web-off', 'dora')
    const ref = await passwordTokens('web-ref', 'dora')
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    expect(await judged(ref.access_token)).toEqual(ALIVE)
    await sql(`UPDATE clients SET enabled = false WHERE client_id IN ('web-off', 'web-ref')`)
    expect(await seenAtOnce(jwt.access_token)).toBe(true)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(DEAD)
    expect(await judged(ref.access_token)).toEqual(DEAD)
    // The client itself cannot use its refresh token, introspect it or revoke anything (RFC 7009 §2.1: it must authenticate).
    expect(await refresh('web-off', jwt.refresh_token)).toEqual(INVALID_CLIENT)
    expect(await introspect(jwt.refresh_token, as('web-off'))).toEqual({
      status: 401,
      error: 'invalid_client',
      error_description: 'caller authentication failed',
    })
    const revoke = await postForm(authz.app, '/connect/revocation', { token: jwt.access_token }, as('web-off'))
    expect({ status: revoke.statusCode, body: revoke.json() }).toEqual(INVALID_CLIENT)

    await sql(`UPDATE clients SET enabled = true WHERE client_id IN ('web-off', 'web-ref')`)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    expect(await judged(ref.access_token)).toEqual(ALIVE)
    expect((await refresh('web-off', jwt.refresh_token)).status).toBe(200)
  })

  it('a deleted client: its tokens are inactive everywhere', async () => {
    const ref = await passwordTokens('web-gone', 'dora')
    expect(await judged(ref.access_token)).toEqual(ALIVE)
    await sql(`DELETE FROM clients WHERE client_id = 'web-gone'`)
    afterTtl()
    expect(await judged(ref.access_token)).toEqual(DEAD)
  })

  it('a client token, and what another client got for it by token exchange, die with the client', async () => {
    const own = await serviceToken()
    const exchanged = await exchange({ subject_token: own })
    expect(exchanged.status).toBe(200)
    const onBehalf = exchanged.body.access_token as string
    expect(decodeJwt(onBehalf)).toMatchObject({ sub: 'svc', client_id: 'gateway' })
    expect(await introspect(own)).toMatchObject({ active: true, sub: 'svc', client_id: 'svc' })
    expect(await introspect(onBehalf)).toMatchObject({ active: true, sub: 'svc', client_id: 'gateway' })
    await sql(`UPDATE clients SET enabled = false WHERE client_id = 'svc'`)
    afterTtl()
    try {
      expect([await introspect(own), await introspect(onBehalf), await introspectAsJwt(onBehalf)]).toEqual([
        { active: false },
        { active: false },
        { active: false },
      ])
      expect(await exchange({ subject_token: own })).toEqual(refused('subject_token'))
      expect(await exchange({ subject_token: (await passwordTokens('web', 'carol')).access_token, actor_token: own })).toEqual(
        refused('actor_token'),
      )
    } finally {
      await sql(`UPDATE clients SET enabled = true WHERE client_id = 'svc'`)
      afterTtl()
    }
    expect((await introspect(onBehalf)).active).toBe(true)
  })
})

describe('tokens of a disabled or deleted user', () => {
  it('a disabled user: access tokens inactive everywhere, refresh tokens inactive and refused; alive again once enabled', async () => {
    const jwt = await passwordTokens('web', 'erin')
    const ref = await passwordTokens('web-ref-u', 'erin')
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    expect(await judged(ref.access_token)).toEqual(ALIVE)
    expect(await introspect(jwt.refresh_token, as('web'))).toMatchObject({ active: true, sub: 'sub-erin' })
    await sql(`UPDATE users SET enabled = false WHERE username = 'erin'`)
    expect(await seenAtOnce(jwt.access_token)).toBe(true)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(DEAD)
    expect(await judged(ref.access_token)).toEqual(DEAD)
    expect(await introspect(jwt.refresh_token, as('web'))).toEqual({ active: false })
    expect(await refresh('web', jwt.refresh_token)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'the user is no longer active' },
    })

    await sql(`UPDATE users SET enabled = true WHERE username = 'erin'`)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    expect(await introspect(jwt.refresh_token, as('web'))).toMatchObject({ active: true, sub: 'sub-erin' })
    expect((await refresh('web', jwt.refresh_token)).status).toBe(200)
  })

  it('a deleted user: access and refresh tokens inactive everywhere, the refresh grant refused', async () => {
    const jwt = await passwordTokens('web', 'fay')
    const ref = await passwordTokens('web-ref-u', 'fay')
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    await sql(`DELETE FROM users WHERE username = 'fay'`)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(DEAD)
    expect(await judged(ref.access_token)).toEqual(DEAD)
    expect(await introspect(ref.refresh_token, as('web-ref-u'))).toEqual({ active: false })
    expect(await refresh('web-ref-u', ref.refresh_token)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'the user is no longer active' },
    })
  })

  it('a disabled user whose subject id is also a client id: the token that client got for that user dies too', async () => {
    // Subject ids are chosen by whoever writes the seed file or runs the CLI (users add --subject),
    // so nothing stops a user's subject from equalling a client's id; the user is still judged.
    const jwt = await passwordTokens('gil', 'gil')
    expect(decodeJwt(jwt.access_token)).toMatchObject({ sub: 'gil', client_id: 'gil' })
    expect(await judged(jwt.access_token)).toEqual(ALIVE)
    await sql(`UPDATE users SET enabled = false WHERE username = 'gil'`)
    afterTtl()
    expect(await judged(jwt.access_token)).toEqual(DEAD)
    expect(await introspect(jwt.refresh_token, as('gil'))).toEqual({ active: false })
  })
})
