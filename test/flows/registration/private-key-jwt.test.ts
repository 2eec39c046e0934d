// A client that registers public keys (RFC 7591 §2: token_endpoint_auth_method private_key_jwt
// with jwks or jwks_uri) is given no secret and gets tokens with a signed assertion (RFC 7523
// §2.2); keys a verifier must not trust (private members, symmetric keys, broken keys), both
// jwks and jwks_uri, or a jwks_uri off https are refused and register nothing.
import { exportJWK, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { assertion, CC, FAILED, jwksServer, newKey, post, withAssertion, type TestKey } from '../../client-auth/assertion-fixtures.js'
import { bearer, createRegistrationTestApp, JSON_TYPE, pathOf, register } from './harness.js'

let authz: TestApp
let key: TestKey
let jwks: Awaited<ReturnType<typeof jwksServer>>
beforeAll(async () => {
  authz = await createRegistrationTestApp({ RATE_LIMIT_REGISTRATION: '0' })
  key = await newKey('agent-1')
  jwks = await jwksServer()
}, 120_000)
afterAll(async () => {
  await authz?.close()
  await jwks?.close()
})

const SERVICE = {
  client_name: 'Nightly job',
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'private_key_jwt',
  scope: 'orders.read',
}

const tokenWith = (jwt: string) => post(authz, '/connect/token', { grant_type: CC, scope: 'orders.read', ...withAssertion(jwt) })

const clientCount = async () => (await authz.db.query<{ n: number }>('SELECT count(*)::int AS n FROM clients')).rows[0]!.n

async function refused(body: Record<string, unknown>, description: string) {
  const before = await clientCount()
  const res = await register(authz.app, body)
  expect({ status: res.statusCode, body: res.json() }).toEqual({
    status: 400,
    body: { error: 'invalid_client_metadata', error_description: description },
  })
  expect(await clientCount()).toBe(before)
}

describe('registering with private_key_jwt and jwks', () => {
  it('echoes the method and the keys, issues no secret; the client gets a token with an assertion, and a read shows the method', async () => {
    const res = await register(authz.app, { ...SERVICE, jwks: { keys: [key.publicJwk] } })
    expect(res.statusCode).toBe(201)
    const c = res.json()
    expect(c).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] }, grant_types: [CC] })
    expect(c).not.toHaveProperty('client_secret')
    expect(c).not.toHaveProperty('client_secret_expires_at')
    expect(c).not.toHaveProperty('jwks_uri')
    const stored = await authz.db.query('SELECT count(*)::int AS n FROM client_secrets WHERE client_id = $1', [c.client_id])
    expect(stored.rows[0]).toEqual({ n: 0 })

    const token = await tokenWith(await assertion(authz, key, c.client_id))
    expect(token.statusCode).toBe(200)
    expect(token.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' })

    // Signed by a key it did not register: the one fixed refusal.
    const other = await newKey('agent-1')
    const forged = await tokenWith(await assertion(authz, other, c.client_id))
    expect({ status: forged.statusCode, body: forged.json() }).toEqual({ status: 401, body: FAILED })

    const read = await authz.app.inject({
      method: 'GET',
      url: pathOf(c.registration_client_uri),
      headers: bearer(c.registration_access_token),
    })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({
      client_id: c.client_id,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.publicJwk] },
    })
  })

  it('may not turn into a client_secret client by an update (it has no secret), nor a secret client into a key one', async () => {
    const c = (await register(authz.app, { ...SERVICE, jwks: { keys: [key.publicJwk] } })).json()
    const update = await authz.app.inject({
      method: 'PUT',
      url: pathOf(c.registration_client_uri),
      headers: { ...JSON_TYPE, ...bearer(c.registration_access_token) },
      payload: JSON.stringify({ ...SERVICE, client_id: c.client_id, token_endpoint_auth_method: 'client_secret_basic' }),
    })
    expect({ status: update.statusCode, body: update.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: 'token_endpoint_auth_method cannot change to or from private_key_jwt' },
    })
    const s = (await register(authz.app, { ...SERVICE, token_endpoint_auth_method: 'client_secret_basic' })).json()
    expect(s.client_secret).toEqual(expect.any(String))
    const toKeys = await authz.app.inject({
      method: 'PUT',
      url: pathOf(s.registration_client_uri),
      headers: { ...JSON_TYPE, ...bearer(s.registration_access_token) },
      payload: JSON.stringify({ ...SERVICE, client_id: s.client_id, jwks: { keys: [key.publicJwk] } }),
    })
    expect(toKeys.statusCode).toBe(400)
    expect(toKeys.json().error_description).toBe('token_endpoint_auth_method cannot change to or from private_key_jwt')
  })
})

describe('registering with private_key_jwt and jwks_uri', () => {
  it('fetches the keys from the registered jwks_uri (a loopback name over http) and issues a token', async () => {
    const remote = await newKey('remote-1')
    jwks.keys.push(remote.publicJwk)
    const res = await register(authz.app, { ...SERVICE, jwks_uri: jwks.url })
    expect(res.statusCode).toBe(201)
    const c = res.json()
    expect(c).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwks.url })
    expect(c).not.toHaveProperty('client_secret')
    expect(c).not.toHaveProperty('jwks')
    const token = await tokenWith(await assertion(authz, remote, c.client_id))
    expect(token.statusCode).toBe(200)
    expect(jwks.requests()).toBeGreaterThan(0)
  })
})

describe("a registered jwks_uri is a stranger's URL", () => {
  it('is never fetched from a private address: the assertion is refused, and the log says why', async () => {
    const res = await register(authz.app, { ...SERVICE, jwks_uri: 'https://10.20.30.40/jwks' })
    expect(res.statusCode).toBe(201)
    const c = res.json()
    const token = await tokenWith(await assertion(authz, key, c.client_id))
    expect({ status: token.statusCode, body: token.json() }).toEqual({ status: 401, body: FAILED })
    const failed = authz.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'fetching a client jwks_uri failed' && l.client_id === c.client_id)
    expect(failed.map((l) => l.reason)).toEqual(['the jwks_uri document is at an address that may not be reached'])
  })
})

describe('keys that are refused: invalid_client_metadata, nothing registered', () => {
  it('a private key in jwks', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const priv = { ...(await exportJWK(privateKey)), kid: 'oops' }
    expect(priv.d).toEqual(expect.any(String))
    await refused({ ...SERVICE, jwks: { keys: [priv] } }, 'jwks must hold public keys only, without private key members')
  })

  it('a private RSA key even without d (its primes)', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const { d: _d, ...rest } = await exportJWK(privateKey)
    await refused({ ...SERVICE, jwks: { keys: [rest] } }, 'jwks must hold public keys only, without private key members')
  })

  it('a symmetric key', async () => {
    await refused(
      { ...SERVICE, jwks: { keys: [{ kty: 'oct', k: Buffer.alloc(32, 7).toString('base64url'), alg: 'HS256' }] } },
      'jwks must not hold a symmetric key (kty oct)',
    )
  })

  it('a key that is no valid public key', async () => {
    await refused(
      { ...SERVICE, jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }] } },
      'jwks holds a key that is not a valid public key',
    )
  })

  it.each([
    ['not an object', ['x']],
    ['without keys', {}],
    ['with no key', { keys: [] }],
  ])('a jwks %s', async (_what, value) => {
    await refused({ ...SERVICE, jwks: value }, 'jwks must be a JWK Set: an object whose keys member is an array of 1 to 10 public keys')
  })

  it('both jwks and jwks_uri (RFC 7591 §2: MUST NOT both be present)', async () => {
    await refused(
      { ...SERVICE, jwks: { keys: [key.publicJwk] }, jwks_uri: 'https://agent.example/jwks' },
      'jwks and jwks_uri must not both be given',
    )
  })

  it.each([
    ['http on a host that is not this machine', 'http://agent.example/jwks'],
    ['credentials', 'https://user:pw@agent.example/jwks'],
    ['a fragment', 'https://agent.example/jwks#k'],
    ['not a URL', 'jwks'],
  ])('a jwks_uri with %s', async (_what, uri) => {
    await refused(
      { ...SERVICE, jwks_uri: uri },
      'jwks_uri must be an https URL without credentials or fragment (http only for localhost names)',
    )
  })
})
