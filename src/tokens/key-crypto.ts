// Encryption at rest of private signing keys (KEY_ENCRYPTION_SECRET): AES-256-GCM.
// Stored form (see the signing_keys comment in migrations/0001): v1.<iv>.<tag>.<ciphertext>,
// each part base64url; iv is 12 random bytes (NIST SP 800-38D §8.2.2), tag 16 bytes.
// The 256-bit key is HKDF-SHA256(secret) (RFC 5869) with a fixed salt and info, so the same
// secret yields the same key on every replica. The key id is the GCM additional authenticated
// data: a ciphertext copied onto another row does not decrypt.
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
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(kid))
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  const tag = cipher.getAuthTag()
  return [VERSION, iv, tag, data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.')
}

/** Throws KeyDecryptionError (naming the kid, never the secret) when the key or format is wrong. */
export function decryptPrivateKey(stored: string, key: Buffer, kid: string): string {
  const parts = stored.split('.')
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new KeyDecryptionError(`signing key ${kid}: unknown encrypted format`)
  }
  const [, iv, tag, data] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer, Buffer]
  if (iv.length !== 12 || tag.length !== 16) throw new KeyDecryptionError(`signing key ${kid}: malformed ciphertext`)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAAD(Buffer.from(kid))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8')
  } catch {
    throw new KeyDecryptionError(
      `signing key ${kid} cannot be decrypted: KEY_ENCRYPTION_SECRET differs from the one it was stored with`,
    )
  }
}
