// Checking a presented client or API secret against the stored hashes (base64 SHA-256, compared
// in constant time), with every unexpired secret accepted so that secrets can be rotated.
import * as nodeCrypto from 'node:crypto'
import type { Secret } from '../domain/types.js'
import { secretMatches } from '../tokens/handles.js'

/**
 * Constant-time comparison against every unexpired secret (rotation: several may be valid): the latest
 * expiry (ms; Infinity: none) among those `presented` matches; undefined: no match.
 */
function matchedUntil(presented: string, secrets: readonly Secret[], now: number): number | undefined {
  let until: number | undefined
  for (const s of secrets) {
    if (s.expiresAt !== undefined && s.expiresAt <= now) continue
    if (secretMatches(presented, s.valueHash)) until = Math.max(until ?? -Infinity, s.expiresAt ?? Infinity)
  }
  return until
}

/** base64 SHA-256 of a presented secret. */
// One-shot crypto.hash (Node ≥ 20.12) costs a fifth of createHash() for short inputs.
export const sha256 = (value: string): string =>
  typeof nodeCrypto.hash === 'function'
    ? nodeCrypto.hash('sha256', value, 'base64')
    : nodeCrypto.createHash('sha256').update(value).digest('base64')

/** Successful secrets remembered per stored record; an attacker without a valid secret adds nothing. */
const MAX_VERIFIED_PER_RECORD = 16

export interface SecretVerifier {
  /**
   * Whether `presented` matches an unexpired secret, remembering a match for as long as the store
   * keeps returning `record`. `digest`: sha256(presented), when the caller has computed it already.
   */
  matches(record: { readonly secrets: readonly Secret[] }, presented: string, now: number, digest?: string): boolean
}

/**
 * Hot-path secret checks. A match is remembered against the record object the cached store
 * returned (WeakMap), as SHA-256(secret) → that secret's expiry. When the store's cache reloads
 * (CLIENT_CACHE_TTL) it returns a new object and everything is checked afresh, so a removed
 * secret stops working exactly when the client cache says so, and an expired one at once.
 * Without a cache (TTL 0) every lookup returns a new object and nothing is ever reused.
 */
export function createSecretVerifier(): SecretVerifier {
  const verified = new WeakMap<object, Map<string, number>>()
  return {
    matches(record, presented, now, digest) {
      const known = verified.get(record)
      const key = digest ?? sha256(presented)
      const until = known?.get(key)
      if (until !== undefined) return until > now
      const matched = matchedUntil(presented, record.secrets, now)
      if (matched === undefined) return false
      if (!known) verified.set(record, new Map([[key, matched]]))
      else if (known.size < MAX_VERIFIED_PER_RECORD) known.set(key, matched)
      return true
    },
  }
}
