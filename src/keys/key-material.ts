// Key material for signing keys: generation with jose (RFC 7517 JWKs, RFC 7638 thumbprint as
// kid), encryption at rest (key-crypto.ts), and import into node:crypto KeyObjects once per
// load so that signing never parses a key again.
import { createPrivateKey, createPublicKey, type JsonWebKeyInput, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose'
import type { SigningAlg } from '../config.js'
import type { StoredSigningKey } from '../stores/signing-keys.js'
import { decryptPrivateKey, encryptPrivateKey, KeyDecryptionError } from './key-crypto.js'

/** The only members a published key carries (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2). */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e'] as const

export interface LoadedKey {
  stored: StoredSigningKey
  /** The JWKS entry: public members, kid, alg, use. */
  jwk: JWK
  publicKey: KeyObject
  /** Undefined for a key that can no longer sign (superseded), whose private part is not loaded. */
  privateKey: KeyObject | undefined
}

export function publicJwkOf(jwk: Record<string, unknown>, kid: string, alg: SigningAlg): JWK {
  const out: Record<string, unknown> = {}
  for (const m of PUBLIC_MEMBERS) if (typeof jwk[m] === 'string') out[m] = jwk[m]
  return { ...out, kid, alg, use: 'sig' }
}

/**
 * A fresh key pair for `alg`: RSA 2048 for RS256/PS256 (each alg gets its own key, RFC 8725
 * §3.1 advises against one key for several algorithms), P-256 for ES256, Ed25519 for EdDSA.
 * kid = RFC 7638 JWK SHA-256 thumbprint: stable, derived from the key, unique per key.
 */
export async function generateSigningKey(
  alg: SigningAlg,
  times: { createdAt: number; activateAt: number },
  encryptionKey: Buffer | undefined,
): Promise<StoredSigningKey> {
  const pair = await generateKeyPair(alg, { extractable: true, modulusLength: 2048, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) })
  const pub = await exportJWK(pair.publicKey)
  const priv = await exportJWK(pair.privateKey)
  const kid = await calculateJwkThumbprint(pub, 'sha256')
  const plain = JSON.stringify(priv)
  return {
    kid,
    alg,
    publicJwk: publicJwkOf(pub, kid, alg),
    privateJwk: encryptionKey ? encryptPrivateKey(plain, encryptionKey, kid) : plain,
    encrypted: encryptionKey !== undefined,
    createdAt: times.createdAt,
    activateAt: times.activateAt,
    retireAt: undefined,
  }
}

/**
 * Imports a stored key: its public part, and (decrypted when needed) its private part when
 * `canSign` and the key still has one. Errors name the kid, never the secret.
 */
export function loadSigningKey(stored: StoredSigningKey, encryptionKey: Buffer | undefined, canSign: boolean): LoadedKey {
  const loaded = {
    stored,
    jwk: publicJwkOf(stored.publicJwk, stored.kid, stored.alg),
    publicKey: createPublicKey({ key: stored.publicJwk as JsonWebKeyInput['key'], format: 'jwk' }),
  }
  if (!canSign || stored.privateJwk === undefined) return { ...loaded, privateKey: undefined }
  let privateText = stored.privateJwk
  if (stored.encrypted) {
    if (!encryptionKey) {
      throw new KeyDecryptionError(`signing key ${stored.kid} is stored encrypted but KEY_ENCRYPTION_SECRET is not set`)
    }
    privateText = decryptPrivateKey(stored.privateJwk, encryptionKey, stored.kid)
  }
  let privateJwk: JsonWebKeyInput['key']
  try {
    privateJwk = JSON.parse(privateText) as JsonWebKeyInput['key']
  } catch {
    throw new KeyDecryptionError(`signing key ${stored.kid}: private key is not valid JSON`)
  }
  return { ...loaded, privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }) }
}
