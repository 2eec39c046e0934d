// The limit of scenario (a): bare Fastify (with @fastify/formbody, as ours) answering each token
// request with one ES256 signature from node:crypto over claims of the same shape as our access
// token, and nothing else (no client authentication, no database, no audit, no metrics). What a
// token request costs beyond this is what our server adds. Run as its own process pinned to the
// server CPU: LIMIT_PORT=… node --import tsx bench/sign-limit-server.ts.
import formbody from '@fastify/formbody'
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import Fastify from 'fastify'
import { ACCESS_TOKEN_LIFETIME, API, API_SCOPES } from './fixture.js'

const port = Number(process.env.LIMIT_PORT)
if (!Number.isInteger(port) || port <= 0) throw new Error('LIMIT_PORT must be a port number')
const issuer = `http://127.0.0.1:${port}`
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'limit', typ: 'at+jwt' })).toString('base64url')

const app = Fastify({ logger: false })
await app.register(formbody)
app.get('/.well-known/openid-configuration', async () => ({ issuer, token_endpoint: `${issuer}/connect/token` }))
app.post('/connect/token', async (req, reply) => {
  const form = req.body as Record<string, string>
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    iss: issuer,
    exp: now + ACCESS_TOKEN_LIFETIME,
    aud: API.name,
    scope: form.scope ?? API_SCOPES.join(' '),
    client_id: 'bench-jwt',
    jti: randomBytes(16).toString('base64url'),
    iat: now,
    nbf: now,
  }
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')
  void reply.header('cache-control', 'no-store')
  return { access_token: `${input}.${signature}`, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME, scope: claims.scope }
})
await app.listen({ port, host: '127.0.0.1' })
