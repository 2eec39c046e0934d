// GET and POST /connect/userinfo (OpenID Connect Core §5.3.1): the access token in the
// Authorization header (RFC 6750 §2.1) or, for POST, in the form body (§2.2); both at once is
// invalid_request (§2). Answers JSON with no-store; errors carry WWW-Authenticate: Bearer.
// A DPoP-bound token comes as `Authorization: DPoP <token>` with its proof (RFC 9449 §7.1), and
// its errors carry WWW-Authenticate: DPoP.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { OAuthError } from '../../errors.js'
import { readForm } from '../../http/form.js'
import { bearerChallenge, type Presented, type UserinfoService } from './service.js'
import { USERINFO_PATH } from '../../endpoints.js'

export interface UserinfoRouteDeps {
  userinfo: UserinfoService
  realm: string
  rateLimit?: RateLimitOptions | undefined
}

export const userinfoRoutes: FastifyPluginAsync<UserinfoRouteDeps> = async (app, { userinfo, realm, rateLimit }) => {
  function token(req: FastifyRequest, fromBody: string | undefined): Presented | undefined {
    const header = req.headers.authorization
    const bearer = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined
    const dpop = header !== undefined && /^dpop /i.test(header) ? header.slice(5).trim() : undefined
    if ((header !== undefined && bearer === undefined && dpop === undefined) || (header !== undefined && fromBody !== undefined)) {
      throw new OAuthError('invalid_request', 'present the access token once, as a Bearer token', {
        headers: { 'www-authenticate': bearerChallenge(realm, 'invalid_request') },
      })
    }
    if (dpop) return { token: dpop, scheme: 'DPoP', proof: req.headers.dpop, method: req.method }
    const value = bearer || fromBody
    return value ? { token: value, scheme: 'Bearer' } : undefined
  }

  const answer = async (req: FastifyRequest, fromBody: string | undefined, reply: import('fastify').FastifyReply) => {
    const presented = token(req, fromBody)
    const claims = await userinfo.claims(presented)
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    const nonce = presented?.scheme === 'DPoP' ? userinfo.dpopNonce() : undefined
    if (nonce) reply.header('dpop-nonce', nonce)
    return claims
  }

  const formOf = (req: FastifyRequest) =>
    req.method === 'POST' && !(req.headers['content-type'] === undefined && req.body === undefined) ? readForm(req) : {}
  // Browser apps call userinfo too: CORS for the origins of the client the token was issued to.
  const config = {
    rateLimit,
    corsPolicy: 'client' as const,
    corsClientId: async (req: FastifyRequest) => {
      try {
        return await userinfo.clientOf(token(req, formOf(req).access_token)?.token)
      } catch {
        return undefined
      }
    },
  }
  app.get(USERINFO_PATH, { config }, async (req, reply) => answer(req, undefined, reply))
  app.post(USERINFO_PATH, { config }, async (req, reply) => answer(req, formOf(req).access_token, reply))
}
