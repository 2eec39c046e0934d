// POST /connect/par: RFC 9126 §2. Client authentication as at the token endpoint (a public client
// identifies with client_id alone); errors as RFC 6749 §5.2 (invalid_client 401, the rest 400),
// success 201 (§2.2), every response no-store. A DPoP proof sent here (RFC 9449 §10.1) is checked
// as at the token endpoint, for this endpoint's URL, and binds the request as dpop_jkt would.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { signingAlgsFor } from '../../domain/client-profile.js'
import { DPOP_ALGS, type DPoPVerifier } from '../../tokens/dpop.js'
import { readForm } from '../../http/form.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { PAR_PATH, TOKEN_PATH } from '../../endpoints.js'
import type { PushedAuthorizationService } from './service.js'

export interface ParRouteDeps {
  authenticator: ClientAuthenticator
  par: PushedAuthorizationService
  dpop: DPoPVerifier
  /** This endpoint's URL as the issuer publishes it: a DPoP proof's htu. */
  url: string
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const parRoutes: FastifyPluginAsync<ParRouteDeps> = async (app, deps) => {
  app.post(PAR_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'client' } }, async (req, reply) => {
    const form = readForm(req)
    checkInputLengths(form)
    // RFC 9126 §2: an assertion's aud may be the issuer, the token endpoint's URL or this one's.
    const { client } = await deps.authenticator.authenticate(req.headers, form, { address: req.ip, endpoint: [PAR_PATH, TOKEN_PATH] })
    const dpop = await deps.dpop.verify({
      header: req.headers.dpop,
      method: 'POST',
      url: deps.url,
      algorithms: signingAlgsFor(client, DPOP_ALGS),
    })
    const res = await deps.par.push(client, form, dpop)
    req.log.info({ client_id: client.clientId }, 'authorization request pushed')
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    // RFC 9449 §8.2: the nonce for the client's next proof.
    const nonce = dpop && deps.dpop.currentNonce()
    if (nonce) reply.header('dpop-nonce', nonce)
    return reply.code(201).send(res)
  })
}
