// DPoP proofs (RFC 9449 §4.2) as a client makes them: a key pair, and a signed dpop+jwt naming the
// request's method and URL, at the test clock's time unless told otherwise.
import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose'
import type { TestApp } from '../../helpers/app.js'
import { TEST_ISSUER } from '../../helpers/app.js'

export const TOKEN_URL = `${TEST_ISSUER}/connect/token`
export const USERINFO_URL = `${TEST_ISSUER}/connect/userinfo`

export interface DPoPKey {
  privateKey: CryptoKey
  jwk: JWK
  jkt: string
  alg: string
}

export async function dpopKey(alg = 'ES256'): Promise<DPoPKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = await exportJWK(publicKey)
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256'), alg }
}

export interface ProofOptions {
  htm?: string
  htu?: string
  /** Seconds; default the test clock's now. */
  iat?: number
  jti?: string
  accessToken?: string
  nonce?: string
  /** Header members to set or replace (typ, jwk, alg). */
  header?: Record<string, unknown>
  /** Claims to drop. */
  omit?: string[]
}

export async function proof(authz: TestApp, key: DPoPKey, opts: ProofOptions = {}): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: opts.jti ?? randomUUID(),
    htm: opts.htm ?? 'POST',
    htu: opts.htu ?? TOKEN_URL,
    iat: opts.iat ?? Math.floor(authz.clock.now() / 1000),
  }
  if (opts.accessToken !== undefined) claims.ath = createHash('sha256').update(opts.accessToken).digest('base64url')
  if (opts.nonce !== undefined) claims.nonce = opts.nonce
  for (const c of opts.omit ?? []) delete claims[c]
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...opts.header }).sign(key.privateKey)
}
