// POST /connect/revocation (RFC 7009 §2.1, §2.2): the client authenticates, names a token; the
// answer is 200 with an empty body whether or not the token existed.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import { OAuthError } from '../../errors.js'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { readForm } from '../../http/form.js'
import type { RevocationService } from './service.js'
import { REVOCATION_PATH } from '../../endpoints.js'

export interface RevocationRouteDeps {
  authenticator: ClientAuthenticator
  revocation: RevocationService
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const revocationRoutes: FastifyPluginAsync<RevocationRouteDeps> = async (app, deps) => {
  app.post(REVOCATION_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'client' } }, async (req, reply) => {
    const form = readForm(req)
    checkInputLengths(form)
    const auth = await deps.authenticator.authenticate(req.headers, form, { address: req.ip, endpoint: REVOCATION_PATH })
    if (form.token === undefined) throw new OAuthError('invalid_request', 'token is required')
    await deps.revocation.revoke(auth.client, form.token, form.token_type_hint, { address: req.ip, requestId: req.id })
    reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache')
    return reply.send()
  })
}
