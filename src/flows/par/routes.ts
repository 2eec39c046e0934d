// POST /connect/par: RFC 9126 §2. Client authentication as at the token endpoint (a public client
// identifies with client_id alone); errors as RFC 6749 §5.2 (invalid_client 401, the rest 400),
// success 201 (§2.2), every response no-store.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { readForm } from '../../http/form.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { PAR_PATH, TOKEN_PATH } from '../../endpoints.js'
import type { PushedAuthorizationService } from './service.js'

export interface ParRouteDeps {
  authenticator: ClientAuthenticator
  par: PushedAuthorizationService
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const parRoutes: FastifyPluginAsync<ParRouteDeps> = async (app, deps) => {
  app.post(PAR_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'client' } }, async (req, reply) => {
    const form = readForm(req)
    checkInputLengths(form)
    // RFC 9126 §2: an assertion's aud may be the issuer, the token endpoint's URL or this one's.
    const { client } = await deps.authenticator.authenticate(req.headers, form, { address: req.ip, endpoint: [PAR_PATH, TOKEN_PATH] })
    const res = await deps.par.push(client, form)
    req.log.info({ client_id: client.clientId }, 'authorization request pushed')
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(res)
  })
}
