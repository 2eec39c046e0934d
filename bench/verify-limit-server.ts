// The HTTP limit of scenario (c2): bare Fastify (with @fastify/formbody, as ours) answering each
// introspection request by verifying the posted JWT with node:crypto (a KeyObject per kid, prepared
// once from our JWKS), checking its typ, iss and exp, and returning its claims; nothing else (no
// caller authentication, no database, no audit, no metrics). The verify loop of bench/jose-verify.ts
// has no HTTP at all; this is what one verification per request costs behind an HTTP server, so
// what introspection costs beyond it is what our server adds. Run as its own process pinned to the
// server CPU: LIMIT_PORT=… JWKS_URL=… ISSUER=… node --import tsx bench/verify-limit-server.ts.
import formbody from '@fastify/formbody'
import { createPublicKey, verify, type JsonWebKeyInput, type KeyObject } from 'node:crypto'
import Fastify from 'fastify'

const { LIMIT_PORT, JWKS_URL, ISSUER } = process.env
const port = Number(LIMIT_PORT)
if (!Number.isInteger(port) || port <= 0) throw new Error('LIMIT_PORT must be a port number')
if (!JWKS_URL || !ISSUER) throw new Error('JWKS_URL and ISSUER are required')

const jwks = (await (await fetch(JWKS_URL)).json()) as { keys: Array<JsonWebKeyInput['key'] & { kid?: string; alg?: string }> }
const keys = new Map<string, KeyObject>()
for (const jwk of jwks.keys) if (jwk.kid && jwk.alg === 'ES256') keys.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }))

const inactive = { active: false }

function introspect(token: string): Record<string, unknown> {
  const [h, p, s] = token.split('.')
  if (!h || !p || !s) return inactive
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { kid?: string; typ?: string; alg?: string }
  const key = header.kid === undefined ? undefined : keys.get(header.kid)
  if (!key || header.alg !== 'ES256' || header.typ !== 'at+jwt') return inactive
  if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))) return inactive
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>
  if (claims.iss !== ISSUER || !(Number(claims.exp) > Date.now() / 1000)) return inactive
  return { active: true, ...claims }
}

const app = Fastify({ logger: false })
await app.register(formbody)
app.get('/.well-known/openid-configuration', async () => ({ issuer: ISSUER }))
app.post('/connect/introspect', async (req, reply) => {
  const { token } = req.body as Record<string, string | undefined>
  void reply.header('cache-control', 'no-store')
  return token === undefined ? inactive : introspect(token)
})
await app.listen({ port, host: '127.0.0.1' })
