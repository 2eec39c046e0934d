// Encryption at rest (KEY_ENCRYPTION_SECRET) of private signing keys and of the server-wide
// secrets (server_secrets): AES-256-GCM.
// Stored form (see the signing_keys comment in migrations/0001): v1.<iv>.<tag>.<ciphertext>,
// each part base64url; iv is 12 random bytes (NIST SP 800-38D §8.2.2), tag 16 bytes.
// The 256-bit key is HKDF-SHA256(secret) (RFC 5869) with a fixed salt and info, so the same
// secret yields the same key on every replica. The row's name (a key id, or
// 'server-secret:<name>') is the GCM additional authenticated data: a ciphertext copied onto
// another row does not decrypt.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const VERSION = 'v1'
const SALT = 'authz signing keys'
const INFO = 'private JWK encryption v1'

export class KeyDecryptionError extends Error {
  override readonly name = 'KeyDecryptionError'
}

/** Derives the AES-256 key once; callers keep the result, never the secret, for repeated use. */
export function deriveKeyEncryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, SALT, INFO, 32))
}

export function encryptPrivateKey(plaintext: string, key: Buffer, kid: string): string {
  return encryptAtRest(plaintext, key, kid)
}

/** The additional data of an upstream identity provider's client secret (identity_providers.client_secret). */
export const identityProviderSecretAad = (scheme: string) => `identity-provider:${scheme}`

/** The additional data of a client secret kept for client_secret_jwt (client_secrets.sealed_value): its row. */
export const clientSecretAad = (clientId: string, valueHash: string) => `client-secret:${clientId}:${valueHash}`

/** Encrypts `plaintext` bound to `aad` (the name of the row it is stored in). */
export function encryptAtRest(plaintext: string, key: Buffer, aad: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(aad))
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  const tag = cipher.getAuthTag()
  return [VERSION, iv, tag, data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.')
}

/** Throws KeyDecryptionError (naming the kid, never the secret) when the key or format is wrong. */
export function decryptPrivateKey(stored: string, key: Buffer, kid: string): string {
  return decryptAtRest(stored, key, kid, `signing key ${kid}`)
}

/** Decrypts what encryptAtRest stored under `aad`; errors name `what`, never the secret. */
export function decryptAtRest(stored: string, key: Buffer, aad: string, what: string): string {
  const parts = stored.split('.')
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new KeyDecryptionError(`${what}: unknown encrypted format`)
  }
  const [, iv, tag, data] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer, Buffer]
  if (iv.length !== 12 || tag.length !== 16) throw new KeyDecryptionError(`${what}: malformed ciphertext`)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAAD(Buffer.from(aad))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8')
  } catch {
    throw new KeyDecryptionError(`${what} cannot be decrypted: KEY_ENCRYPTION_SECRET differs from the one it was stored with`)
  }
}
