// The benchmark's six scenarios, each one request replayed by
// autocannon. Before a run, the token it needs is obtained with one token request on that server,
// and the request is sent once and its answer checked: a benchmark of `{"active":false}` or of an
// error page would measure nothing, so a wrong answer fails the run before any load is applied.
import { API, API_SCOPES, JWT_CLIENT, REFERENCE_CLIENT, basicAuth } from './fixture.js'
import type { BenchRequest } from './load.js'

/** Where a server answers; both speak the same protocol on different paths. */
export interface Server {
  label: string
  url: string
  tokenPath: string
  introspectionPath: string
}

export interface Prepared {
  request: BenchRequest
  /** The token the request introspects, if any (scenario c hands it to jose). */
  token?: string
}

export interface Target {
  /** Our rate / the comparison rate must be at least this. */
  minRatio: number
  /** Our p99 latency must not exceed the peer's (scenario a). */
  p99AtMostPeer: boolean
}

export interface Scenario {
  id: string
  title: string
  /**
   * 'peer': compared with oidc-provider under the same load; 'verify': with the rate at which one
   * process verifies the token with bare node:crypto (jose's rate is reported beside it).
   */
  comparison: 'peer' | 'verify'
  /** Also run against bare Fastify signing once per request (bench/sign-limit-server.ts): the limit. */
  signLimit?: boolean
  /**
   * Also replay the same requests against bare Fastify verifying one JWT per request
   * (bench/verify-limit-server.ts): the limit with HTTP, beside the verify loop without it.
   */
  verifyLimit?: boolean
  target: Target
  /** Obtains the token it needs and checks one answer; returns the request to replay. */
  prepare(server: Server): Promise<Prepared>
}

const FORM = 'application/x-www-form-urlencoded'
const JWT_INTROSPECTION = 'application/token-introspection+jwt'
const SCOPE = API_SCOPES.join(' ')

function tokenRequest(server: Server, client: { id: string; secret: string }): BenchRequest {
  return {
    url: server.url + server.tokenPath,
    headers: { 'content-type': FORM, accept: 'application/json', authorization: basicAuth(client.id, client.secret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }).toString(),
  }
}

function introspectionRequest(server: Server, token: string, accept: string): BenchRequest {
  return {
    url: server.url + server.introspectionPath,
    headers: { 'content-type': FORM, accept, authorization: basicAuth(API.name, API.secret) },
    body: new URLSearchParams({ token }).toString(),
  }
}

/** Sends `req` once; returns status, content type and body text. */
export async function sendOnce(req: BenchRequest): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body })
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() }
}

/** Sends `req` once and throws, showing the answer, unless it is a 200 that `accept` approves. */
async function expectAnswer(server: Server, req: BenchRequest, what: string, accept: (type: string, body: string) => boolean) {
  const res = await sendOnce(req)
  if (res.status !== 200 || !accept(res.type, res.body)) {
    throw new Error(`${server.label}: ${what}: unexpected answer ${res.status} ${res.type}: ${res.body.slice(0, 500)}`)
  }
  return res.body
}

const isJwt = (s: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(s)

/** One token from `client`, checked: Bearer, both scopes, and the expected format. */
async function obtainToken(server: Server, client: { id: string; secret: string }, format: 'jwt' | 'opaque'): Promise<string> {
  const body = await expectAnswer(server, tokenRequest(server, client), `token for ${client.id}`, (type, text) => {
    if (!type.startsWith('application/json')) return false
    const t = JSON.parse(text) as { access_token?: unknown; token_type?: unknown; scope?: unknown }
    return (
      typeof t.access_token === 'string' &&
      isJwt(t.access_token) === (format === 'jwt') &&
      String(t.token_type).toLowerCase() === 'bearer' &&
      t.scope === SCOPE
    )
  })
  return (JSON.parse(body) as { access_token: string }).access_token
}

/**
 * More than our server's verified-JWT cache holds (JWT_CACHE_SIZE, 10,000 in
 * src/tokens/token-reader.ts): cycled in order, every lookup misses a FIFO or LRU cache.
 */
export const DISTINCT_JWTS = 12_000

/** `count` JWTs from `client`, requested 50 at a time (a few seconds; not measured). */
async function obtainTokens(server: Server, client: { id: string; secret: string }, count: number): Promise<string[]> {
  const req = tokenRequest(server, client)
  const tokens: string[] = []
  while (tokens.length < count) {
    // Setup traffic, not measured: a request that lost its pooled keep-alive socket is sent again
    // once (fetch never retries a POST). Under load, by contrast, any error fails the run.
    const once = () => sendOnce(req).catch(() => sendOnce(req))
    const batch = Array.from({ length: Math.min(50, count - tokens.length) }, once)
    for (const res of await Promise.all(batch)) {
      if (res.status !== 200) throw new Error(`${server.label}: token request failed: ${res.status} ${res.body.slice(0, 500)}`)
      tokens.push((JSON.parse(res.body) as { access_token: string }).access_token)
    }
  }
  return tokens
}

const activeJson = (type: string, text: string) =>
  type.startsWith('application/json') && (JSON.parse(text) as { active?: unknown; scope?: unknown }).active === true

/** RFC 9701: a JWS whose payload's token_introspection says active. */
const activeJwt = (type: string, text: string) => {
  if (!type.startsWith(JWT_INTROSPECTION) || !isJwt(text)) return false
  const payload = JSON.parse(Buffer.from(text.split('.')[1]!, 'base64url').toString('utf8')) as {
    token_introspection?: { active?: unknown }
  }
  return payload.token_introspection?.active === true
}

const peerTarget = (minRatio: number, p99AtMostPeer = false): Target => ({ minRatio, p99AtMostPeer })

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'a',
    title: 'client_credentials, JWT access tokens (ES256)',
    comparison: 'peer',
    target: peerTarget(2, true),
    signLimit: true,
    async prepare(server) {
      await obtainToken(server, JWT_CLIENT, 'jwt')
      return { request: tokenRequest(server, JWT_CLIENT) }
    },
  },
  {
    id: 'b',
    title: 'client_credentials, reference (opaque) access tokens',
    comparison: 'peer',
    target: peerTarget(1.5),
    async prepare(server) {
      await obtainToken(server, REFERENCE_CLIENT, 'opaque')
      return { request: tokenRequest(server, REFERENCE_CLIENT) }
    },
  },
  {
    // oidc-provider answers unsupported_token_type for JWTs, so the yardstick is verification alone.
    id: 'c',
    title: 'introspection of a JWT access token (JSON)',
    comparison: 'verify',
    target: peerTarget(0.8),
    async prepare(server) {
      const token = await obtainToken(server, JWT_CLIENT, 'jwt')
      const request = introspectionRequest(server, token, 'application/json')
      await expectAnswer(server, request, 'introspection of a JWT', activeJson)
      return { request, token }
    },
  },
  {
    // (c) replays one token, which our verified-JWT cache answers without a
    // signature check. Here every request carries another token, more of them than the cache holds
    // and replayed in order, so every request pays the verification: the honest worst case.
    id: 'c2',
    title: `introspection of JWT access tokens, ${DISTINCT_JWTS.toLocaleString('en-US')} distinct, cache defeated (JSON)`,
    comparison: 'verify',
    verifyLimit: true,
    target: peerTarget(0.8),
    async prepare(server) {
      const tokens = await obtainTokens(server, JWT_CLIENT, DISTINCT_JWTS)
      const request = introspectionRequest(server, tokens[0]!, 'application/json')
      await expectAnswer(server, request, 'introspection of a JWT', activeJson)
      return { request: { ...request, bodies: tokens.map((token) => new URLSearchParams({ token }).toString()) }, token: tokens[0]! }
    },
  },
  {
    id: 'd',
    title: 'introspection of a reference token (JSON)',
    comparison: 'peer',
    target: peerTarget(1.5),
    async prepare(server) {
      const request = introspectionRequest(server, await obtainToken(server, REFERENCE_CLIENT, 'opaque'), 'application/json')
      await expectAnswer(server, request, 'introspection of a reference token', activeJson)
      return { request }
    },
  },
  {
    id: 'e',
    title: 'introspection of a reference token, RFC 9701 JWT response',
    comparison: 'peer',
    target: peerTarget(1.5),
    async prepare(server) {
      const request = introspectionRequest(server, await obtainToken(server, REFERENCE_CLIENT, 'opaque'), JWT_INTROSPECTION)
      await expectAnswer(server, request, 'RFC 9701 introspection', activeJwt)
      return { request }
    },
  },
]
