// The extension-grant example of docs/extending.md (examples/jwt-bearer-grant.ts) works as printed:
// the page shows the file's exact text, and a server built with it serves the grant (RFC 7523).
import { readFile } from 'node:fs/promises'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwtBearerGrant } from '../../examples/jwt-bearer-grant.js'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'

let authz: TestApp
let key: CryptoKey
let otherKey: CryptoKey
beforeAll(async () => {
  authz = await createTestApp({ grants: [createJwtBearerGrant] })
  const pair = await generateKeyPair('ES256')
  key = pair.privateKey
  otherKey = (await generateKeyPair('ES256')).privateKey
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'partner-1' }
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'] }],
    clients: [
      {
        clientId: 'partner',
        secrets: [{ value: 'partner-secret' }],
        allowedGrantTypes: [JWT_BEARER],
        allowedScopes: ['orders.read'],
        jwks: { keys: [jwk as never] },
      },
      { clientId: 'keyless', secrets: [{ value: 'keyless-secret' }], allowedGrantTypes: [JWT_BEARER], allowedScopes: ['orders.read'] },
      {
        clientId: 'backend',
        secrets: [{ value: 'backend-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        jwks: { keys: [jwk as never] },
      },
    ],
    users: [
      { subjectId: 'alice-1', username: 'alice' },
      { subjectId: 'bob-1', username: 'bob', enabled: false },
    ],
  })
})
afterAll(() => authz.close())

function assertion(claims: Record<string, unknown> = {}, signWith: CryptoKey = key): Promise<string> {
  const now = Math.floor(authz.clock.now() / 1000)
  return new SignJWT({ iss: 'partner', sub: 'alice-1', aud: `${TEST_ISSUER}/connect/token`, iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'partner-1' })
    .sign(signWith)
}
const post = (params: Record<string, string>, client = 'partner') =>
  postFormBasic(authz.app, '/connect/token', { grant_type: JWT_BEARER, ...params }, client, `${client}-secret`)

describe('the docs/extending.md example: a JWT bearer assertion grant (RFC 7523)', () => {
  it('is printed in docs/extending.md exactly as the file is', async () => {
    const [page, source] = await Promise.all([readFile('docs/extending.md', 'utf8'), readFile('examples/jwt-bearer-grant.ts', 'utf8')])
    expect(page).toContain(`\`\`\`ts\n${source}\`\`\``)
  })

  it('is listed in discovery once registered', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc.grant_types_supported).toEqual([
      'client_credentials',
      'refresh_token',
      'password',
      'urn:openid:params:grant-type:ciba',
      'urn:ietf:params:oauth:grant-type:device_code',
      'authorization_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      JWT_BEARER,
    ])
  })

  it('issues an access token for the asserted user', async () => {
    const res = await post({ assertion: await assertion() })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'orders.read' })
    expect(decodeJwt(res.json().access_token)).toMatchObject({
      iss: TEST_ISSUER,
      sub: 'alice-1',
      client_id: 'partner',
      aud: 'orders-api',
      scope: 'orders.read',
    })
    expect((await post({ assertion: await assertion({ aud: TEST_ISSUER }) })).statusCode).toBe(200)
  })

  it('refuses a bad assertion with invalid_grant and a missing one with invalid_request', async () => {
    const now = Math.floor(authz.clock.now() / 1000)
    const bad = {
      otherKey: await assertion({}, otherKey),
      otherIssuer: await assertion({ iss: 'backend' }),
      otherAudience: await assertion({ aud: 'https://elsewhere.example' }),
      expired: await assertion({ iat: now - 120, exp: now - 60 }),
      tooOld: await assertion({ iat: now - 600, exp: now + 60 }),
      noExp: await assertion({ exp: undefined }),
      unknownUser: await assertion({ sub: 'nobody' }),
      disabledUser: await assertion({ sub: 'bob-1' }),
      notAJwt: 'not-a-jwt',
    }
    const answers: Record<string, unknown> = {}
    for (const [name, a] of Object.entries(bad)) {
      const res = await post({ assertion: a })
      answers[name] = { status: res.statusCode, body: res.json() }
    }
    const refused = { status: 400, body: { error: 'invalid_grant', error_description: 'assertion is not valid' } }
    expect(answers).toEqual(Object.fromEntries(Object.keys(bad).map((n) => [n, refused])))
    expect((await post({ assertion: await assertion({ iss: 'keyless' }) }, 'keyless')).json()).toEqual(refused.body)
    expect((await post({})).json()).toEqual({ error: 'invalid_request', error_description: 'assertion is missing or invalid' })
  })

  it('is refused to a client that does not list it', async () => {
    const res = await post({ assertion: await assertion({ iss: 'backend' }) }, 'backend')
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: 'the client may not use this grant type' },
    })
  })
})
