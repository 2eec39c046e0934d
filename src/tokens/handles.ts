// Handles (codes, refresh and reference tokens, device codes, auth_req_id) are 256-bit CSPRNG
// values, base64url; only their SHA-256 is stored, so a database dump yields no usable token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export function newHandle(): string {
  return randomBytes(32).toString('base64url')
}

/** base64(SHA-256(secret)), the stored form of client and API secrets (Duende-compatible). */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('base64')
}

/**
 * Compares a presented secret with a stored base64 SHA-256 (32 bytes) or SHA-512 (64 bytes)
 * hash in constant time.
 */
export function secretMatches(presented: string, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, 'base64')
  const algorithm = stored.length === 32 ? 'sha256' : stored.length === 64 ? 'sha512' : undefined
  if (!algorithm) return false
  const actual = createHash(algorithm).update(presented).digest()
  return timingSafeEqual(actual, stored)
}
