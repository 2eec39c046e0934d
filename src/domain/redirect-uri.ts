// The redirect URIs a client may register (RFC 6749 §3.1.2, RFC 9700 §2.1, RFC 8252 §7): the
// authorization endpoint sends the browser, with a code, to one of them (and logout to a
// post-logout one), compared as exact strings. Allowed: an absolute https URI; http only on this
// machine (RFC 8252 §7.3 loopback, and RFC 6761 §6.3 localhost names); a native app's private-use
// scheme, a domain name it controls in reverse order (RFC 8252 §7.1). Anything else (javascript:,
// data:, a host name with its https:// forgotten) could only hand the code to the wrong party.

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** RFC 8252 §7.3 loopback addresses, localhost and its subdomains (RFC 6761 §6.3): this machine. */
export function isLocalHost(hostname: string): boolean {
  const h = hostname.toLowerCase()
  return LOCAL_HOSTS.has(h) || h.endsWith('.localhost')
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/
// RFC 3986 §2: unreserved, reserved and percent-encoded octets; nothing else (no space, backslash,
// quote, control or non-ASCII character), so that every parser reads the URI the same way.
const URI_CHARACTERS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/
// RFC 3986 Appendix B, split into scheme, authority, path and fragment.
const PARTS = /^[^:]+:(?:\/\/([^/?#]*))?([^?#]*)(?:\?[^#]*)?(#.*)?$/
const REVERSE_DOMAIN = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+$/

/** Why `uri` cannot be a redirect URI, as a sentence about it; undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase()
  if (scheme === undefined) {
    return "is not an absolute URI: it has no scheme (https://app.example.com/callback, or a native app's com.example.app:/callback)"
  }
  const web = scheme === 'https' || scheme === 'http'
  if (!web && !REVERSE_DOMAIN.test(scheme)) {
    return `scheme "${scheme}:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app's private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)`
  }
  if (!URI_CHARACTERS.test(uri)) {
    return 'must contain only URI characters (RFC 3986 §2): percent-encode spaces, backslashes, quotes and other characters'
  }
  const [, authority, path = '', fragment] = PARTS.exec(uri) ?? []
  if (fragment !== undefined) return 'must not contain a fragment (#)'
  if (!web) {
    // RFC 8252 §7.1: com.example.app:/callback. Without a slash after the colon, "host:port/path"
    // (an https:// forgotten) would pass for a private-use scheme.
    return authority === undefined && !path.startsWith('/')
      ? 'a private-use scheme is followed by a path, as com.example.app:/callback (RFC 8252 §7.1)'
      : undefined
  }
  if (!authority) return `must name a host (${scheme}://host/path)`
  // RFC 3986 §3.2.1 deprecates credentials in a URI; "https://good.example@evil.example" goes to evil.
  if (authority.includes('@')) return 'must not contain credentials (user@ or user:password@)'
  if (scheme === 'http' && !isLocalHost(authority.replace(/:\d*$/, ''))) {
    return 'must use https (http only for localhost, 127.0.0.1 and [::1]: RFC 8252 §7.3)'
  }
  try {
    new URL(uri)
  } catch {
    return 'is not a valid URL'
  }
  return undefined
}

// RFC 8252 §7.3: a native app listens on a loopback port the system gives it at the time, so the
// port of a loopback IP redirect URI is not compared ("localhost" is not such a URI: §8.3).
const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?([/?][^#]*)?$/

/** Whether `given` is one of `registered`: the same string, or a loopback IP one but for its port. */
export function isRegisteredRedirectUri(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true
  const g = LOOPBACK_REDIRECT.exec(given)
  if (!g) return false
  const rest = (m: RegExpExecArray) => m[2] ?? '/'
  return registered.some((r) => {
    const m = LOOPBACK_REDIRECT.exec(r)
    return m !== null && m[1] === g[1] && rest(m) === rest(g)
  })
}
