// A token got by token exchange (RFC 8693) is issued from the grant of its subject token, so it
// goes when that grant goes: revoking the refresh token (RFC 7009 §2.1), or a replayed refresh
// token (RFC 9700 §4.14.2), revokes the family the subject token was issued into, and with it
// every token exchanged from it, however deep the chain, JWT or reference. Without this, a token
// exchanged for a user's access token outlived the user's logout or a detected token theft.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { createPgGrantStore } from '../../../src/stores/grants.postgres.js'
import { createPgUserStore } from '../../../src/stores/users.postgres.js'
import { createTokenReader, type ReadAccessToken } from '../../../src/tokens/token-reader.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../../helpers/app.js'

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'
const EXCHANGERS = ['web', 'web-ref', 'gateway', 'gateway-ref', 'svc']

const userClient = (clientId: string, accessTokenType: 'jwt' | 'reference') => ({
  clientId,
  secrets: [{ value: `${clientId}-secret` }],
  allowedGrantTypes: ['password', 'refresh_token'],
  accessTokenType,
  allowedScopes: ['openid', 'orders.read', 'offline_access'],
  allowOfflineAccess: true,
})
const gateway = (clientId: string, accessTokenType: 'jwt' | 'reference') => ({
  clientId,
  secrets: [{ value: `${clientId}-secret` }],
  allowedGrantTypes: [TE],
  accessTokenType,
  allowedScopes: ['openid', 'orders.read'],
  allowedSubjectTokenClients: EXCHANGERS,
  allowedExchangeAudiences: ['orders-api'],
})

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'offline_access'],
    clients: [
      userClient('web', 'jwt'),
      userClient('web-ref', 'reference'),
      gateway('gateway', 'jwt'),
      gateway('gateway-ref', 'reference'),
      { clientId: 'svc', secrets: [{ value: 'svc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
    ],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw' }],
  })
})
afterAll(() => authz.close())

const post = (url: string, params: Record<string, string>, clientId: string) =>
  authz.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, authorization: basic(clientId, `${clientId}-secret`) },
    payload: form(params),
  })
async function userTokens(clientId: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await post(
    '/connect/token',
    { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid orders.read offline_access' },
    clientId,
  )
  expect(res.statusCode).toBe(200)
  return res.json()
}
const exchangeRaw = (subjectToken: string, clientId: string) =>
  post('/connect/token', { grant_type: TE, subject_token: subjectToken, subject_token_type: AT, audience: 'orders-api' }, clientId)
async function exchange(subjectToken: string, clientId: string): Promise<string> {
  const res = await exchangeRaw(subjectToken, clientId)
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}
/** As the orders API sees the token (RFC 7662): true or false, never anything else. */
async function active(token: string): Promise<boolean> {
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/introspect',
    headers: { ...FORM, authorization: basic('orders-api', 'orders-secret') },
    payload: form({ token }),
  })
  expect(res.statusCode).toBe(200)
  const { active } = res.json()
  expect(typeof active).toBe('boolean')
  return active
}
const revoke = async (token: string, clientId: string) =>
  expect((await post('/connect/revocation', { token }, clientId)).statusCode).toBe(200)

describe('token exchange: the exchanged token belongs to the grant of its subject token', () => {
  it.each([
    ['web', 'gateway'],
    ['web', 'gateway-ref'],
    ['web-ref', 'gateway'],
    ['web-ref', 'gateway-ref'],
  ])("revoking %s's refresh token ends what %s got by exchanging its access token", async (user, exchanger) => {
    const tokens = await userTokens(user)
    const exchanged = await exchange(tokens.access_token, exchanger)
    expect(await active(exchanged)).toBe(true)
    await revoke(tokens.refresh_token, user)
    expect({ subject: await active(tokens.access_token), exchanged: await active(exchanged) }).toEqual({ subject: false, exchanged: false })
  })

  it('a replayed refresh token revokes every token of the chain: exchanged, and exchanged again', async () => {
    const tokens = await userTokens('web')
    const once = await exchange(tokens.access_token, 'gateway')
    const twice = await exchange(once, 'gateway-ref')
    const thrice = await exchange(twice, 'gateway')
    expect((await post('/connect/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, 'web')).statusCode).toBe(200)
    // The stolen copy, used again: the whole family goes (RFC 9700 §4.14.2).
    expect(
      (await post('/connect/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, 'web')).json(),
    ).toMatchObject({ error: 'invalid_grant' })
    expect(await Promise.all([once, twice, thrice].map(active))).toEqual([false, false, false])
  })

  it('is refused once the family is revoked, as its subject token is no longer active', async () => {
    const tokens = await userTokens('web-ref')
    await revoke(tokens.refresh_token, 'web-ref')
    expect((await exchangeRaw(tokens.access_token, 'gateway')).json()).toEqual({
      error: 'invalid_request',
      error_description: 'subject_token is not an active access token of this server',
    })
  })

  it("a subject token from no grant family (a client's own) still exchanges, and the exchange lives as long as it", async () => {
    const own = (await post('/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, 'svc')).json().access_token
    const exchanged = await exchange(own, 'gateway')
    expect(await active(exchanged)).toBe(true)
  })

  it('on a replica that has not yet heard of the revocation, the exchange still finds the family revoked', async () => {
    // Another replica: the same database, but its in-memory revocation list has not had the NOTIFY yet.
    const replica = createTokenReader({
      config: authz.config,
      clock: authz.clock,
      keys: authz.app.authz.keys,
      grants: createPgGrantStore(authz.db),
      revocations: { has: () => false },
      clients: createPgClientStore(authz.db),
      users: createPgUserStore(authz.db),
    })
    const jwt = await userTokens('web')
    const ref = await userTokens('web-ref')
    const own = (await post('/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, 'svc')).json().access_token
    const read = async (token: string) => (await replica.read(token)) as ReadAccessToken
    const [jwtRead, refRead, ownRead] = [await read(jwt.access_token), await read(ref.access_token), await read(own)]
    expect((await replica.familyOf(jwtRead))?.familyId).toEqual(expect.any(String))
    expect((await replica.familyOf(refRead))?.familyId).toEqual(expect.any(String))
    expect(await replica.familyOf(ownRead)).toEqual({ familyId: undefined })
    await revoke(jwt.refresh_token, 'web')
    // read() still takes the JWT for alive (no NOTIFY here), but its family is gone: not "no family".
    expect((await replica.read(jwt.access_token))?.kind).toBe('access_token')
    expect(await replica.familyOf(jwtRead)).toBeUndefined()
  })

  it('racing the revocation of the family: no exchanged token survives it, in any trial', { timeout: 120_000 }, async () => {
    const survivors: string[] = []
    let exchangedBeforeRevocation = 0
    for (let trial = 0; trial < 20; trial++) {
      const user = trial % 2 === 0 ? 'web' : 'web-ref'
      const exchanger = trial % 4 < 2 ? 'gateway' : 'gateway-ref'
      const tokens = await userTokens(user)
      // Either one sent first, in turns of four trials.
      const revokeFirst = Math.floor(trial / 4) % 2 === 1
      const revoking = revokeFirst ? revoke(tokens.refresh_token, user) : undefined
      const exchanging = exchangeRaw(tokens.access_token, exchanger)
      // When the exchange goes first, the revocation follows it by 0 to 20 ms (wall time, not
      // protocol time): which of the two reaches the database first then varies on every
      // database and machine, and some exchanges are issued before their family is revoked.
      const lag = [0, 2, 5, 10, 20][trial % 5]!
      const revokeAfter = async () => {
        await new Promise((resolve) => setTimeout(resolve, lag))
        return revoke(tokens.refresh_token, user)
      }
      const [res] = await Promise.all([exchanging, revoking ?? revokeAfter()])
      if (res.statusCode !== 200) {
        expect(res.json()).toEqual({
          error: 'invalid_request',
          error_description: 'subject_token is not an active access token of this server',
        })
        continue
      }
      exchangedBeforeRevocation++
      if (await active(res.json().access_token)) survivors.push(`${trial}: ${user} -> ${exchanger}`)
    }
    expect(survivors).toEqual([])
    // The race was run: some exchanges did win it (and were revoked with the family).
    expect(exchangedBeforeRevocation).toBeGreaterThan(0)
  })
})
