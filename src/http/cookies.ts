// Cookies for the pages a person uses (RFC 6265 §4.1 Set-Cookie, §5.4 Cookie). Small on purpose:
// no dependency for two functions.

/** Parses a Cookie header; the first occurrence of a name wins (§5.4: most specific path first). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null)
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    let value = part.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    if (name === '' || name in out) continue
    try {
      out[name] = decodeURIComponent(value)
    } catch {
      out[name] = value
    }
  }
  return out
}

export interface CookieOptions {
  path: string
  /** Seconds; 0 deletes the cookie; undefined makes it a session cookie. */
  maxAge?: number
  secure: boolean
  httpOnly?: boolean
  sameSite?: 'Lax' | 'Strict'
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new Error('invalid cookie name')
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path}`]
  if (o.maxAge !== undefined) parts.push(`Max-Age=${o.maxAge}`)
  if (o.httpOnly !== false) parts.push('HttpOnly')
  if (o.secure) parts.push('Secure')
  parts.push(`SameSite=${o.sameSite ?? 'Lax'}`)
  return parts.join('; ')
}
