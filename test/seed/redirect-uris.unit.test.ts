// Which redirect URIs a seed file may register (RFC 6749 §3.1.2, RFC 8252 §7): absolute https
// URIs, http only on this machine (loopback, RFC 8252 §7.3), a native app's private-use scheme named
// after a domain it controls (RFC 8252 §7.1), and nothing else. The authorization endpoint sends
// the person's browser, with a code, to whatever is registered: a javascript: or data: URI runs
// script in the page that holds the code, a plain-http host lets anyone on the path read it, and a
// URI without a scheme ("localhost:3000/cb" reads as scheme "localhost") can never be right.
import { describe, expect, it } from 'vitest'
import { SeedError, validateSeed } from '../../src/seed/apply.js'

const NOT_ALLOWED = (scheme: string) =>
  `scheme "${scheme}:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app's private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)`

/** The problems validateSeed reports for one confidential code-flow client with these URIs. */
function problems(redirectUris: unknown[], postLogoutRedirectUris: unknown[] = []): string[] {
  try {
    validateSeed({
      clients: [{ clientId: 'web', secrets: [{ value: 'web-secret' }], allowedGrantTypes: ['authorization_code'], redirectUris, postLogoutRedirectUris }],
    })
    return []
  } catch (err) {
    if (!(err instanceof SeedError)) throw err
    return err.problems
  }
}

describe('seed redirect URIs', () => {
  it.each([
    // Script in the browser that receives the code (and in the logout redirect).
    ['javascript:alert(document.cookie)', NOT_ALLOWED('javascript')],
    ['JavaScript:alert(1)//', NOT_ALLOWED('javascript')],
    ['data:text/html,<script>alert(1)</script>', NOT_ALLOWED('data')],
    ['vbscript:msgbox(1)', NOT_ALLOWED('vbscript')],
    ['file:///etc/passwd', NOT_ALLOWED('file')],
    // No scheme at all: "localhost" is read as the scheme, the port as the path.
    ['localhost:3000/cb', NOT_ALLOWED('localhost')],
    ['/callback', 'is not an absolute URI: it has no scheme (https://app.example.com/callback, or a native app\'s com.example.app:/callback)'],
    ['app.example.com/callback', 'is not an absolute URI: it has no scheme (https://app.example.com/callback, or a native app\'s com.example.app:/callback)'],
    // A host name with a port, its https:// forgotten, looks like a reverse-domain scheme.
    ['app.example.com:8443/callback', 'a private-use scheme is followed by a path, as com.example.app:/callback (RFC 8252 §7.1)'],
    // The code in clear text on the network.
    ['http://app.example.com/callback', 'must use https (http only for localhost, 127.0.0.1 and [::1]: RFC 8252 §7.3)'],
    ['http://localhost.evil.example/callback', 'must use https (http only for localhost, 127.0.0.1 and [::1]: RFC 8252 §7.3)'],
    ['http://127.0.0.1.nip.io/callback', 'must use https (http only for localhost, 127.0.0.1 and [::1]: RFC 8252 §7.3)'],
    // What a person reads is not where the browser goes.
    ['https://app.example.com@evil.example/callback', 'must not contain credentials (user@ or user:password@)'],
    ['http://localhost:3000@evil.example/callback', 'must not contain credentials (user@ or user:password@)'],
    ['https://app.example.com\\@evil.example/callback', 'must contain only URI characters (RFC 3986 §2): percent-encode spaces, backslashes, quotes and other characters'],
    ['https:evil.example/callback', 'must name a host (https://host/path)'],
    ['https:///evil.example/callback', 'must name a host (https://host/path)'],
    ['https://app.example.com/call back', 'must contain only URI characters (RFC 3986 §2): percent-encode spaces, backslashes, quotes and other characters'],
    ['https://app.example.com/cb\u0000', 'must contain only URI characters (RFC 3986 §2): percent-encode spaces, backslashes, quotes and other characters'],
    ['https://app.example.com/%zz', 'must contain only URI characters (RFC 3986 §2): percent-encode spaces, backslashes, quotes and other characters'],
    ['https://app.example.com:port/callback', 'is not a valid URL'],
    // RFC 6749 §3.1.2: no fragment.
    ['https://app.example.com/callback#frag', 'must not contain a fragment (#)'],
    ['com.example.app:/callback#x', 'must not contain a fragment (#)'],
  ])('refuses %j, naming the client and the JSON path', (uri, message) => {
    expect(problems([uri])).toEqual([`clients[0].redirectUris[0]: client web: ${message}`])
    expect(problems(['https://app.example.com/callback'], [uri])).toEqual([`clients[0].postLogoutRedirectUris[0]: client web: ${message}`])
  })

  it.each([
    'https://app.example.com/callback',
    'https://app.example.com:8443/auth/callback?tenant=acme',
    'HTTPS://App.Example.com/callback',
    'https://[2001:db8::1]/callback',
    // RFC 8252 §7.3 loopback, and localhost (RFC 6761 §6.3) as docs/connect-an-app.md uses it.
    'http://localhost:3000/callback',
    'http://localhost/callback',
    'http://127.0.0.1:8080/callback',
    'http://[::1]:8080/callback',
    'http://app.localhost:3000/callback',
    // RFC 8252 §7.1 private-use schemes, as AppAuth and most native libraries register them.
    'com.example.app:/callback',
    'com.googleusercontent.apps.1234-abcd:/oauth2redirect',
    'io.identityserver.demo:/oauthredirect',
    'com.example.app://callback',
    'https://app.example.com/cb%20x',
  ])('accepts %j', (uri) => {
    expect(problems([uri], [uri])).toEqual([])
  })

  it('refuses a code-flow client without a redirect URI: it could never finish a sign-in', () => {
    expect(problems([])).toEqual([
      'clients[0].redirectUris: client web: allowedGrantTypes has authorization_code, which needs at least one redirect URI',
    ])
    // Other clients need none.
    expect(() => validateSeed({ clients: [{ clientId: 'cc', allowedGrantTypes: ['client_credentials'] }] })).not.toThrow()
  })
})
