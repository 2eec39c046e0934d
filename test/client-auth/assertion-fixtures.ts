// Keys, a seed and signed client assertions (RFC 7523 §2.2) for the client authentication tests.
import { createServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { randomUUID } from 'node:crypto'
import { FORM, form, TEST_ISSUER, type TestApp } from '../helpers/app.js'

export const CC = 'client_credentials'
export const CIBA = 'urn:openid:params:grant-type:ciba'
export const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
export const HMAC_SECRET = 'a-shared-secret-of-at-least-thirty-two-bytes'
export const FAILED = { error: 'invalid_client', error_description: 'client authentication failed' }

export interface TestKey {
  privateKey: CryptoKey
  publicJwk: JWK
  kid: string
  alg: string
}

export async function newKey(kid: string, alg = 'ES256'): Promise<TestKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, kid, alg, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

export function assertionSeed(k: TestKey, jwksUri: string) {
  return {
    apiScopes: [{ name: 'orders.read' }],
    identityResources: ['openid'],
    clients: [
      {
        clientId: 'signer',
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [k.publicJwk] },
        // Kept, but never accepted: the client's method is private_key_jwt.
        secrets: [{ value: 'signer-secret' }],
        allowedGrantTypes: [CC, CIBA, DEVICE],
        allowedScopes: ['openid', 'orders.read'],
      },
      {
        clientId: 'hmac',
        tokenEndpointAuthMethod: 'client_secret_jwt',
        secrets: [{ value: HMAC_SECRET }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
      },
      { clientId: 'remote', tokenEndpointAuthMethod: 'private_key_jwt', jwksUri, allowedGrantTypes: [CC], allowedScopes: ['orders.read'] },
      // No method fixed: today's behaviour, a secret only (its jwks serve request objects).
      {
        clientId: 'legacy',
        secrets: [{ value: 'legacy-secret' }],
        jwks: { keys: [k.publicJwk] },
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
      },
    ],
    users: [{ subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: {} }],
  }
}

/** A client assertion, times from the app's clock; `claims` and `header` override. */
export async function assertion(
  t: Pick<TestApp, 'clock'>,
  key: { privateKey: CryptoKey | Uint8Array; kid?: string | undefined; alg: string },
  clientId: string,
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(t.clock.now() / 1000)
  return new SignJWT({ iss: clientId, sub: clientId, aud: TEST_ISSUER, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: key.alg, ...(key.kid ? { kid: key.kid } : {}), ...header })
    .sign(key.privateKey)
}

/** An unsigned JWT (alg none), which no endpoint may accept. */
export function unsignedAssertion(t: Pick<TestApp, 'clock'>, clientId: string): string {
  const now = Math.floor(t.clock.now() / 1000)
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${part({ alg: 'none' })}.${part({ iss: clientId, sub: clientId, aud: TEST_ISSUER, jti: randomUUID(), exp: now + 60 })}.`
}

let addressCounter = 0
/** A fresh source address, so that one test's failures never block another's (the throttle is per address). */
export const nextAddress = () => `198.51.100.${++addressCounter % 250}`

export function post(t: TestApp, url: string, params: Record<string, string>, address = nextAddress()) {
  return t.app.inject({ method: 'POST', url, remoteAddress: address, headers: FORM, payload: form(params) })
}

export const withAssertion = (jwt: string, extra: Record<string, string> = {}) => ({
  client_assertion_type: JWT_BEARER,
  client_assertion: jwt,
  ...extra,
})

/** A local jwks_uri: serves `keys`, counts the requests it answers. */
export async function jwksServer(): Promise<{ url: string; keys: JWK[]; requests: () => number; close(): Promise<void> }> {
  const keys: JWK[] = []
  let count = 0
  const server: Server = createServer((_req, res) => {
    count++
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    keys,
    requests: () => count,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}
