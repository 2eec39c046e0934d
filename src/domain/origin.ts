// Web origins (RFC 6454 §6.1 serialisation): scheme, host and an optional port, nothing else.

/**
 * True when `s` is an http(s) origin exactly as a browser serialises it in the `Origin` header
 * (lower-case scheme and host, no default port, no path, no trailing slash).
 */
export function isWebOrigin(s: string): boolean {
  if (s.length > 300 || !/^https?:\/\/[^\s/?#\\@]+$/.test(s)) return false
  try {
    return new URL(s).origin === s
  } catch {
    return false
  }
}
