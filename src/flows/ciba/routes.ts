// POST /connect/ciba: OpenID CIBA Core 1.0 §7.1 backchannel authentication endpoint (poll, ping and push modes).
// Confidential clients only (§7.1: the client authenticates); errors per §13 (invalid_client
// 401, access_denied 403, the rest 400), every response no-store.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { CIBA_INPUT_LIMITS, checkInputLengths } from '../../domain/input-limits.js'
import { readForm } from '../../http/form.js'
import { CIBA_PARAMETER_ERRORS } from './request-object.js'
import type { CibaService } from './service.js'
import { CIBA_PATH } from '../../endpoints.js'

export interface CibaRouteDeps {
  authenticator: ClientAuthenticator
  ciba: CibaService
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const cibaRoutes: FastifyPluginAsync<CibaRouteDeps> = async (app, deps) => {
  app.post(CIBA_PATH, { config: { rateLimit: deps.rateLimit } }, async (req, reply) => {
    // binding_message gets its own error code (invalid_binding_message), here and in the service.
    const form = readForm(req, { codes: CIBA_PARAMETER_ERRORS })
    checkInputLengths(form, CIBA_INPUT_LIMITS)
    const { client } = await deps.authenticator.authenticate(req.headers, form, {
      address: req.ip,
      requireConfidential: true,
      endpoint: CIBA_PATH,
    })
    const res = await deps.ciba.start(client, form, { address: req.ip, requestId: req.id })
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    return res
  })
}
