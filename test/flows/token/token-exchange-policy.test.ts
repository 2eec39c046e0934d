// Token exchange (RFC 8693) under attack: what a client may exchange is configured, never "any
// access token of ours". §2.1 leaves it to the server to decide whether the client may act for
// the subject, and §2.2.2 answers a subject_token refused by policy with invalid_request. Each
// client lists the clients whose tokens it may present (allowedSubjectTokenClients, empty by
// default: none).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../../helpers/app.js'

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'
const NOT_ALLOWED = { error: 'invalid_request', error_description: 'subject_token was issued to a client whose tokens this client may not exchange' }

const userClient = (clientId: string, accessTokenType: 'jwt' | 'reference' = 'jwt') => ({
  clientId, secrets: [{ value: `${clientId}-secret` }], allowedGrantTypes: ['password'], accessTokenType,
  allowedScopes: ['openid', 'orders.read', 'offline_access'], allowOfflineAccess: true,
})
const gateway = (clientId: string, extra: Record<string, unknown> = {}) => ({
  clientId, secrets: [{ value: `${clientId}-secret` }], allowedGrantTypes: [TE], allowedScopes: ['openid', 'orders.read'], ...extra,
})

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  await applySeed(t.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'offline_access'],
    clients: [
      userClient('web'), userClient('web-ref', 'reference'), userClient('partner'),
      { clientId: 'backend', secrets: [{ value: 'backend-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
      // Token exchange, but nothing configured to exchange.
      gateway('open-gateway'),
    ],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw' }],
  })
})
afterAll(() => t.close())

const post = (params: Record<string, string>, clientId: string) =>
  t.app.inject({ method: 'POST', url: '/connect/token', headers: { ...FORM, authorization: basic(clientId, `${clientId}-secret`) }, payload: form(params) })
const exchange = (params: Record<string, string>, clientId: string) => post({ grant_type: TE, subject_token_type: AT, ...params }, clientId)
async function userTokens(clientId: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await post({ grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid orders.read offline_access' }, clientId)
  expect(res.statusCode).toBe(200)
  return res.json()
}
async function backendToken(): Promise<string> {
  const res = await post({ grant_type: 'client_credentials', scope: 'orders.read' }, 'backend')
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}
function expectRefused(res: Awaited<ReturnType<typeof post>>, status: number, body: Record<string, string>) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body })
  expect(res.headers).toMatchObject({ 'cache-control': 'no-store', pragma: 'no-cache' })
}

describe('token exchange: which subject tokens a client may exchange', () => {
  it("refuses another client's client_credentials token: the gateway would act as the back-end service", async () => {
    expectRefused(await exchange({ subject_token: await backendToken() }, 'open-gateway'), 400, NOT_ALLOWED)
  })

  it("refuses any user's token by default: a client that lists no clients exchanges nothing", async () => {
    for (const client of ['web', 'web-ref', 'partner']) {
      expectRefused(await exchange({ subject_token: (await userTokens(client)).access_token }, 'open-gateway'), 400, NOT_ALLOWED)
    }
  })

  describe('with allowedSubjectTokenClients', () => {
    beforeAll(async () => {
      await applySeed(t.db, { clients: [gateway('gateway', { allowedSubjectTokenClients: ['web', 'web-ref'] })] })
    })

    it('exchanges the tokens of the listed clients, JWT or reference', async () => {
      for (const client of ['web', 'web-ref']) {
        const res = await exchange({ subject_token: (await userTokens(client)).access_token }, 'gateway')
        expect({ client, status: res.statusCode }).toEqual({ client, status: 200 })
        expect(res.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid orders.read', issued_token_type: AT })
      }
    })

    it("refuses the tokens of every other client, the back-end service's included", async () => {
      expectRefused(await exchange({ subject_token: (await userTokens('partner')).access_token }, 'gateway'), 400, NOT_ALLOWED)
      expectRefused(await exchange({ subject_token: await backendToken() }, 'gateway'), 400, NOT_ALLOWED)
    })

    it('refuses its own tokens unless it lists itself', async () => {
      const own = (await exchange({ subject_token: (await userTokens('web')).access_token }, 'gateway')).json().access_token
      expectRefused(await exchange({ subject_token: own }, 'gateway'), 400, NOT_ALLOWED)
      await applySeed(t.db, { clients: [gateway('gateway', { allowedSubjectTokenClients: ['web', 'web-ref', 'gateway'] })] })
      expect((await exchange({ subject_token: own }, 'gateway')).statusCode).toBe(200)
    })
  })
})
