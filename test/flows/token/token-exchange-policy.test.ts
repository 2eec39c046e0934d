// Token exchange (RFC 8693) under attack: what a client may exchange is configured, never "any
// access token of ours". §2.1 leaves it to the server to decide whether the client may act for
// the subject, and §2.2.2 answers a subject_token refused by policy with invalid_request. Each
// client lists the clients whose tokens it may present (allowedSubjectTokenClients, empty by
// default: none), and the API resources it may obtain tokens for (allowedExchangeAudiences, empty
// by default: none); a token for any other audience is invalid_target (§2.2.2).
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { SeedError } from '../../../src/seed/errors.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../../helpers/app.js'

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'
const NOT_ALLOWED = {
  error: 'invalid_request',
  error_description: 'subject_token was issued to a client whose tokens this client may not exchange',
}
const WRONG_AUDIENCE = {
  error: 'invalid_target',
  error_description: 'the token would be for an audience this client may not obtain tokens for',
}

const userClient = (clientId: string, accessTokenType: 'jwt' | 'reference' = 'jwt') => ({
  clientId,
  secrets: [{ value: `${clientId}-secret` }],
  allowedGrantTypes: ['password'],
  accessTokenType,
  allowedScopes: ['openid', 'orders.read', 'offline_access'],
  allowOfflineAccess: true,
})
const gateway = (clientId: string, extra: Record<string, unknown> = {}) => ({
  clientId,
  secrets: [{ value: `${clientId}-secret` }],
  allowedGrantTypes: [TE],
  allowedScopes: ['openid', 'orders.read'],
  ...extra,
})

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    // Two APIs that share a scope: a token with orders.read is good at both unless narrowed.
    apiResources: [
      { name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] },
      { name: 'reports-api', scopes: ['orders.read'], secrets: [{ value: 'reports-secret' }] },
    ],
    identityResources: ['openid', 'offline_access'],
    clients: [
      userClient('web'),
      userClient('web-ref', 'reference'),
      userClient('partner'),
      {
        clientId: 'backend',
        secrets: [{ value: 'backend-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
      // Token exchange, but nothing configured to exchange.
      gateway('open-gateway'),
      // May exchange web's tokens, but was told of no audience.
      gateway('web-gateway', { allowedSubjectTokenClients: ['web'] }),
    ],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw' }],
  })
})
afterAll(() => authz.close())

const post = (params: Record<string, string>, clientId: string) =>
  authz.app.inject({
    method: 'POST',
    url: '/connect/token',
    headers: { ...FORM, authorization: basic(clientId, `${clientId}-secret`) },
    payload: form(params),
  })
const exchange = (params: Record<string, string>, clientId: string) => post({ grant_type: TE, subject_token_type: AT, ...params }, clientId)
async function userTokens(clientId: string, extra: Record<string, string> = {}): Promise<{ access_token: string; refresh_token: string }> {
  const res = await post(
    { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid orders.read offline_access', ...extra },
    clientId,
  )
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
      await applySeed(authz.db, {
        clients: [
          gateway('gateway', { allowedSubjectTokenClients: ['web', 'web-ref'], allowedExchangeAudiences: ['orders-api', 'reports-api'] }),
        ],
      })
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
      await applySeed(authz.db, {
        clients: [
          gateway('gateway', {
            allowedSubjectTokenClients: ['web', 'web-ref', 'gateway'],
            allowedExchangeAudiences: ['orders-api', 'reports-api'],
          }),
        ],
      })
      expect((await exchange({ subject_token: own }, 'gateway')).statusCode).toBe(200)
    })
  })
})

describe('token exchange: which audiences a client may obtain tokens for', () => {
  /** alice's token from web, meant for the orders API alone. */
  const ordersToken = async () => (await userTokens('web', { resource: 'orders-api' })).access_token

  it('refuses to retarget a token meant for one API to another API that shares its scope', async () => {
    const subject = await ordersToken()
    expect(decodeJwt(subject).aud).toBe('orders-api')
    expectRefused(await exchange({ subject_token: subject, audience: 'reports-api' }, 'web-gateway'), 400, WRONG_AUDIENCE)
    expectRefused(await exchange({ subject_token: subject, resource: 'reports-api' }, 'web-gateway'), 400, WRONG_AUDIENCE)
  })

  it('refuses every API audience by default, asked for or implied by the scopes', async () => {
    const subject = await ordersToken()
    expectRefused(await exchange({ subject_token: subject, audience: 'orders-api' }, 'web-gateway'), 400, WRONG_AUDIENCE)
    expectRefused(await exchange({ subject_token: subject }, 'web-gateway'), 400, WRONG_AUDIENCE)
  })

  it('lets a token with OpenID scopes alone through: it is for this server (userinfo), not for an API', async () => {
    const res = await exchange({ subject_token: await ordersToken(), scope: 'openid' }, 'web-gateway')
    expect(res.statusCode).toBe(200)
    expect(decodeJwt(res.json().access_token)).toMatchObject({ aud: 'https://authz.test', scope: 'openid', client_id: 'web-gateway' })
  })

  describe('with allowedExchangeAudiences', () => {
    beforeAll(async () => {
      await applySeed(authz.db, {
        clients: [gateway('orders-gateway', { allowedSubjectTokenClients: ['web'], allowedExchangeAudiences: ['orders-api'] })],
      })
    })

    it('issues tokens for the listed audience, named by audience, resource or both', async () => {
      const named: Array<Record<string, string>> = [
        { audience: 'orders-api' },
        { resource: 'orders-api' },
        { audience: 'orders-api', resource: 'orders-api' },
      ]
      for (const params of named) {
        const res = await exchange({ subject_token: await ordersToken(), ...params }, 'orders-gateway')
        expect({ params, status: res.statusCode }).toEqual({ params, status: 200 })
        expect(decodeJwt(res.json().access_token)).toMatchObject({ aud: 'orders-api', scope: 'openid orders.read' })
      }
    })

    it('refuses any other audience, and a token whose scopes would also reach one', async () => {
      const subject = await ordersToken()
      expectRefused(await exchange({ subject_token: subject, audience: 'reports-api' }, 'orders-gateway'), 400, WRONG_AUDIENCE)
      // Unnamed, orders.read means both APIs that take it: the client must name the one it may have.
      expectRefused(await exchange({ subject_token: subject }, 'orders-gateway'), 400, WRONG_AUDIENCE)
      expectRefused(await exchange({ subject_token: (await userTokens('web')).access_token }, 'orders-gateway'), 400, WRONG_AUDIENCE)
    })

    it('an unknown audience is still invalid_target unknown resource', async () => {
      expectRefused(await exchange({ subject_token: await ordersToken(), audience: 'nowhere' }, 'orders-gateway'), 400, {
        error: 'invalid_target',
        error_description: 'unknown resource',
      })
    })
  })
})

describe('the seed fields', () => {
  it('refuse an entry that is empty or has whitespace, naming its path, and change nothing', async () => {
    for (const field of ['allowedSubjectTokenClients', 'allowedExchangeAudiences']) {
      const err = await applySeed(authz.db, { clients: [gateway('bad-gateway', { [field]: ['ok', 'two words'] })] }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(SeedError)
      expect((err as SeedError).message).toContain(`clients[0].${field}[1]`)
    }
    expect((await authz.db.query(`SELECT 1 FROM clients WHERE client_id = 'bad-gateway'`)).rows).toEqual([])
  })
})
