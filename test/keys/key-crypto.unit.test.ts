import { describe, expect, it } from 'vitest'
import { decryptPrivateKey, deriveKeyEncryptionKey, encryptPrivateKey, KeyDecryptionError } from '../../src/keys/key-crypto.js'

const key = deriveKeyEncryptionKey('a secret of sixteen+ characters')

describe('private key encryption (AES-256-GCM)', () => {
  it('round-trips, with a fresh IV each time', () => {
    const a = encryptPrivateKey('{"d":"secret"}', key, 'kid-1')
    const b = encryptPrivateKey('{"d":"secret"}', key, 'kid-1')
    expect(a).not.toBe(b)
    expect(a).toMatch(/^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/)
    expect(decryptPrivateKey(a, key, 'kid-1')).toBe('{"d":"secret"}')
  })

  it('derives the same 256-bit key from the same secret (replicas agree)', () => {
    expect(deriveKeyEncryptionKey('a secret of sixteen+ characters').equals(key)).toBe(true)
    expect(key.length).toBe(32)
  })

  it('refuses another secret, another row (kid is authenticated), tampering and unknown formats', () => {
    const c = encryptPrivateKey('{"d":"secret"}', key, 'kid-1')
    const other = deriveKeyEncryptionKey('another secret of 16+ chars')
    expect(() => decryptPrivateKey(c, other, 'kid-1')).toThrow(KeyDecryptionError)
    expect(() => decryptPrivateKey(c, key, 'kid-2')).toThrow('signing key kid-2 cannot be decrypted')
    const parts = c.split('.')
    parts[3] = Buffer.from('x').toString('base64url') + parts[3]!.slice(2)
    expect(() => decryptPrivateKey(parts.join('.'), key, 'kid-1')).toThrow(KeyDecryptionError)
    expect(() => decryptPrivateKey(`v2.${c.slice(3)}`, key, 'kid-1')).toThrow('signing key kid-1: unknown encrypted format')
    expect(() => decryptPrivateKey('v1.AA.AA.AA', key, 'kid-1')).toThrow('signing key kid-1: malformed ciphertext')
  })
})
