// Pushed authorization requests and request objects over app.inject: the authorization code
// flow's seed (test/flows/authorization-code/harness.ts) plus clients with a signing key:
// `jar` (confidential, ES256 key), `par-only` (requirePushedAuthorization), `jar-only`
// (requireRequestObject), `jar-signer` (private_key_jwt, the same key), and with a jwks_uri
// given, `jar-remote` (its keys there only).
import { randomUUID } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { authorizeSeed } from '../authorization-code/harness.js'

export const JAR_CB = 'https://jar.example/cb'

export interface ParTestApp extends TestApp {
  /** The private key of `jar`, `par-only` and `jar-only` (their jwks hold its public part). */
  privateKey: CryptoKey
}

export async function createParTestApp(env: Record<string, string> = {}, opts: { jwksUri?: string } = {}): Promise<ParTestApp> {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
  const base = authorizeSeed()
  const keyed = (clientId: string, extra: Record<string, unknown> = {}) => ({
    clientId,
    secrets: [{ value: `${clientId}-secret` }],
    allowedGrantTypes: ['authorization_code'],
    allowedScopes: ['openid', 'profile', 'orders.read'],
    redirectUris: [JAR_CB],
    jwks: { keys: [jwk] },
    ...extra,
  })
  const seed = {
    ...base,
    clients: [
      ...base.clients,
      keyed('jar'),
      keyed('par-only', { requirePushedAuthorization: true }),
      keyed('jar-only', { requireRequestObject: true }),
      keyed('jar-signer', { tokenEndpointAuthMethod: 'private_key_jwt', secrets: undefined }),
      ...(opts.jwksUri ? [keyed('jar-remote', { jwks: undefined, jwksUri: opts.jwksUri })] : []),
    ],
  }
  const authz = await createTestApp({ env })
  await applySeed(authz.db, seed)
  return Object.assign(authz, { privateKey })
}

/** A request object for `clientId` (default `jar`), valid now by the app's clock unless claims override. */
export async function requestObject(
  t: ParTestApp,
  claims: JWTPayload = {},
  opts: { clientId?: string; alg?: string; key?: CryptoKey | Uint8Array } = {},
): Promise<string> {
  const clientId = opts.clientId ?? 'jar'
  const now = Math.floor(t.clock.now() / 1000)
  return new SignJWT({
    iss: clientId,
    aud: TEST_ISSUER,
    client_id: clientId,
    iat: now,
    nbf: now,
    exp: now + 60,
    jti: randomUUID(),
    response_type: 'code',
    redirect_uri: JAR_CB,
    scope: 'openid',
    state: 'jar-state',
    nonce: 'jar-nonce',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    ...claims,
  })
    .setProtectedHeader({ alg: opts.alg ?? 'ES256', typ: 'oauth-authz-req+jwt', kid: 'k1' })
    .sign(opts.key ?? t.privateKey)
}

/** POST /connect/par with client_secret_post for `clientId`. */
export function push(t: TestApp, params: Record<string, string>, clientId = 'jar') {
  return postForm(t.app, '/connect/par', { client_id: clientId, client_secret: `${clientId}-secret`, ...params })
}

/** The verifier whose S256 challenge requestObject() puts in by default (RFC 7636 Appendix B). */
export const RFC7636_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
