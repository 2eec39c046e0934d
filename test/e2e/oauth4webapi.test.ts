// End to end with a real OAuth client library against a listening server: discovery,
// client_credentials, introspection (JSON and RFC 9701 JWT, validated by the library), revocation.
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/domain/clock.js'
import { createLogger } from '../../src/http/logger.js'
import { testConfig } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { seedTokens } from '../flows/token/token-fixtures.js'

let testDb: TestDb
let app: Awaited<ReturnType<typeof buildApp>>
let as: oauth.AuthorizationServer
const insecure = { [oauth.allowInsecureRequests]: true }

beforeAll(async () => {
  testDb = await createTestDb()
  const port = await freePort() // the issuer must be the listening address
  const config = testConfig({ ISSUER: `http://127.0.0.1:${port}` })
  app = await buildApp({ config, db: testDb.db, clock: systemClock, logger: createLogger({ level: 'silent' }) })
  await seedTokens({ db: testDb.db } as Parameters<typeof seedTokens>[0])
  await app.listen({ port, host: '127.0.0.1' })
  const issuer = new URL(config.issuer)
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }))
})
afterAll(async () => {
  await app?.close()
  await testDb?.close()
})

const backend: oauth.Client = { client_id: 'backend' }
const ordersApi: oauth.Client = { client_id: 'orders-api', introspection_signed_response_alg: 'ES256' }

async function clientCredentials(scope: string) {
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    backend,
    oauth.ClientSecretBasic('s3cret'),
    new URLSearchParams({ scope }),
    insecure,
  )
  return oauth.processClientCredentialsResponse(as, backend, res)
}

describe('oauth4webapi against a listening server', () => {
  it('obtains, introspects (JSON and JWT) and revokes a token', async () => {
    const tokens = await clientCredentials('orders.read')
    expect(tokens.token_type).toBe('bearer') // the library normalizes case
    expect(tokens.scope).toBe('orders.read')
    expect(tokens.expires_in).toBe(3600)

    const json = await oauth.processIntrospectionResponse(
      as,
      ordersApi,
      await oauth.introspectionRequest(as, ordersApi, oauth.ClientSecretPost('orders-secret'), tokens.access_token, insecure),
    )
    expect(json).toMatchObject({
      active: true,
      client_id: 'backend',
      sub: 'backend',
      scope: 'orders.read',
      aud: ['orders-api'],
      token_type: 'Bearer',
    }) // the library normalizes aud

    const signed = await oauth.processIntrospectionResponse(
      as,
      ordersApi,
      await oauth.introspectionRequest(as, ordersApi, oauth.ClientSecretBasic('orders-secret'), tokens.access_token, {
        ...insecure,
        requestJwtResponse: true,
      }),
    )
    expect(signed).toMatchObject({ active: true, client_id: 'backend', scope: 'orders.read', aud: ['orders-api'] })

    const revoked = await oauth.revocationRequest(as, backend, oauth.ClientSecretBasic('s3cret'), tokens.access_token, insecure)
    await oauth.processRevocationResponse(revoked)
    const after = await oauth.processIntrospectionResponse(
      as,
      ordersApi,
      await oauth.introspectionRequest(as, ordersApi, oauth.ClientSecretBasic('orders-secret'), tokens.access_token, insecure),
    )
    expect(after).toEqual({ active: false })
  })

  it('surfaces invalid_client to the library with the 401 challenge', async () => {
    const res = await oauth.clientCredentialsGrantRequest(as, backend, oauth.ClientSecretBasic('wrong'), new URLSearchParams(), insecure)
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(`Basic realm="${as.issuer}"`)
    // The library reports the challenge itself rather than the JSON body.
    await expect(oauth.processClientCredentialsResponse(as, backend, res)).rejects.toMatchObject({
      code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE',
      status: 401,
      cause: [{ scheme: 'basic', parameters: { realm: as.issuer } }],
    })
  })
})
