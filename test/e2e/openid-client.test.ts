// End to end with openid-client (v6) against a listening server: the password grant (tokens, an
// ID token whose signature and claims the library validates, the refresh token redeemed) and
// token exchange (RFC 8693) with and without an actor, checked through introspection.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/domain/clock.js'
import { createLogger } from '../../src/http/logger.js'
import { applySeed } from '../../src/seed/apply.js'
import { testConfig } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'

let testDb: TestDb
let app: Awaited<ReturnType<typeof buildApp>>
let issuer: URL

beforeAll(async () => {
  testDb = await createTestDb()
  const port = await freePort() // the issuer must be the listening address
  const config = testConfig({ ISSUER: `http://127.0.0.1:${port}` })
  app = await buildApp({ config, db: testDb.db, clock: systemClock, logger: createLogger({ level: 'silent' }) })
  await applySeed(testDb.db, {
    apiScopes: [{ name: 'orders.read' }, { name: 'orders.write' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'email', 'offline_access'],
    clients: [
      {
        clientId: 'legacy',
        secrets: [{ value: 'legacy-secret' }],
        allowedGrantTypes: ['password', 'refresh_token'],
        allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
      },
      {
        clientId: 'gateway',
        secrets: [{ value: 'gateway-secret' }],
        allowedGrantTypes: [TE],
        allowedScopes: ['orders.read', 'orders.write'],
        allowedSubjectTokenClients: ['legacy'],
        allowedExchangeAudiences: ['orders-api'],
      },
      {
        clientId: 'svc-a',
        secrets: [{ value: 'svc-a-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
    ],
    users: [
      { subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } },
    ],
  })
  await app.listen({ port, host: '127.0.0.1' })
  issuer = new URL(config.issuer)
})
afterAll(async () => {
  await app?.close()
  await testDb?.close()
})

async function configFor(clientId: string, secret: string): Promise<client.Configuration> {
  const config = await client.discovery(issuer, clientId, secret, client.ClientSecretBasic(secret), {
    execute: [client.allowInsecureRequests],
  })
  client.enableNonRepudiationChecks(config) // ID token signatures checked against our JWKS
  return config
}

describe('openid-client: password grant', () => {
  it('gets tokens and a validated ID token with auth_time and amr pwd, then refreshes', async () => {
    const legacy = await configFor('legacy', 'legacy-secret')
    expect(legacy.serverMetadata().grant_types_supported).toEqual([
      'client_credentials',
      'refresh_token',
      'password',
      'urn:openid:params:grant-type:ciba',
      'urn:ietf:params:oauth:grant-type:device_code',
      'authorization_code',
      TE,
    ])
    const before = Math.floor(Date.now() / 1000)
    const tokens = await client.genericGrantRequest(legacy, 'password', {
      username: 'alice',
      password: 'alice-pw',
      scope: 'openid profile email orders.read offline_access',
    })
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'openid profile email orders.read offline_access' })
    expect(tokens.access_token).toEqual(expect.any(String))
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const claims = tokens.claims()!
    expect(claims).toMatchObject({
      iss: issuer.href.replace(/\/$/, ''),
      sub: 'alice-1',
      aud: 'legacy',
      amr: ['pwd'],
      name: 'Alice Example',
      email: 'alice@example.com',
    })
    expect(claims.auth_time).toBeGreaterThanOrEqual(before)
    expect(claims.auth_time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))

    const refreshed = await client.refreshTokenGrant(legacy, tokens.refresh_token!)
    expect(refreshed.claims()).toMatchObject({ sub: 'alice-1', amr: ['pwd'], auth_time: claims.auth_time })
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
  })

  it('surfaces invalid_grant for a wrong password', async () => {
    const legacy = await configFor('legacy', 'legacy-secret')
    await expect(
      client.genericGrantRequest(legacy, 'password', { username: 'alice', password: 'wrong', scope: 'openid' }),
    ).rejects.toMatchObject({
      name: 'ResponseBodyError',
      status: 400,
      error: 'invalid_grant',
      error_description: 'the username or password is incorrect',
    })
  })
})

describe('openid-client: token exchange', () => {
  async function aliceToken(): Promise<string> {
    const legacy = await configFor('legacy', 'legacy-secret')
    return (await client.genericGrantRequest(legacy, 'password', { username: 'alice', password: 'alice-pw', scope: 'openid orders.read' }))
      .access_token
  }
  const introspect = async (token: string) => client.tokenIntrospection(await configFor('orders-api', 'orders-secret'), token)

  it('exchanges a user token without an actor', async () => {
    const gateway = await configFor('gateway', 'gateway-secret')
    const res = await client.genericGrantRequest(gateway, TE, { subject_token: await aliceToken(), subject_token_type: AT })
    expect(res).toMatchObject({ token_type: 'bearer', issued_token_type: AT, scope: 'orders.read' })
    const seen = await introspect(res.access_token)
    expect(seen).toMatchObject({ active: true, sub: 'alice-1', client_id: 'gateway', scope: 'orders.read', amr: ['pwd'] })
    expect(seen.act).toBeUndefined()
  })

  it('exchanges a user token with an actor token: act names the actor', async () => {
    const gateway = await configFor('gateway', 'gateway-secret')
    const actor = (await client.clientCredentialsGrant(await configFor('svc-a', 'svc-a-secret'), { scope: 'orders.read' })).access_token
    const res = await client.genericGrantRequest(gateway, TE, {
      subject_token: await aliceToken(),
      subject_token_type: AT,
      actor_token: actor,
      actor_token_type: AT,
      audience: 'orders-api',
    })
    expect(res).toMatchObject({ token_type: 'bearer', issued_token_type: AT, scope: 'orders.read' })
    expect(await introspect(res.access_token)).toMatchObject({ active: true, sub: 'alice-1', client_id: 'gateway', act: { sub: 'svc-a' } })
  })

  it('surfaces invalid_request for a subject token that is not ours', async () => {
    const gateway = await configFor('gateway', 'gateway-secret')
    await expect(client.genericGrantRequest(gateway, TE, { subject_token: 'not-ours', subject_token_type: AT })).rejects.toMatchObject({
      name: 'ResponseBodyError',
      status: 400,
      error: 'invalid_request',
      error_description: 'subject_token is not an active access token of this server',
    })
  })
})
