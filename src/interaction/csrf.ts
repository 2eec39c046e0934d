// CSRF tokens for every form a person submits (sign-in included, before any session exists).
// The browser holds a random 256-bit binding value in a cookie; the form carries
// HMAC-SHA256(server secret, binding). The secret lives in the database (server_secrets, shared
// by every replica), so someone who can plant or read a cookie (a sibling subdomain, over http)
// still cannot compute a token for it: only a page we rendered for that browser holds one. A
// token from another browser, or from before a sign-in (the binding is replaced then), does not
// match. The Origin check on every form POST (src/http/page-kit.ts) is the second, independent line.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const BINDING = /^[A-Za-z0-9_-]{43}$/
const LABEL = 'authz csrf v1\n'

export interface CsrfTokens {
  /** A fresh binding value for the cookie. */
  newBinding(): string
  /** Whether a cookie value is one we could have issued (else the caller issues a new one). */
  isBinding(value: string | undefined): value is string
  /** The token for forms shown to the browser holding `binding`. */
  token(binding: string): string
  /** Constant-time check of a presented token; false when either side is missing or malformed. */
  verify(binding: string | undefined, presented: string | undefined): boolean
}

export function createCsrfTokens(secret: Buffer): CsrfTokens {
  if (secret.length < 32) throw new Error('the CSRF secret must be at least 32 bytes')
  const isBinding = (value: string | undefined): value is string => value !== undefined && BINDING.test(value)
  const mac = (binding: string) =>
    createHmac('sha256', secret)
      .update(LABEL + binding)
      .digest()
  return {
    newBinding: () => randomBytes(32).toString('base64url'),
    isBinding,
    token: (binding) => mac(binding).toString('base64url'),
    verify(binding, presented) {
      if (!isBinding(binding) || typeof presented !== 'string' || presented.length !== 43) return false
      const given = Buffer.from(presented, 'base64url')
      return given.length === 32 && timingSafeEqual(given, mac(binding))
    },
  }
}
