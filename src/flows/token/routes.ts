// POST /connect/token (RFC 6749 §3.2, §5.1, §5.2). Parses the form, authenticates the client,
// delegates to the token service; success and error bodies carry no-store / no-cache. A DPoP
// proof (RFC 9449 §5) is checked once the client is known, so a failed authentication uses no jti.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { readForm } from '../../http/form.js'
import type { TokenService } from './service.js'
import { DPOP_ALGS, type DPoPVerifier } from '../../tokens/dpop.js'
import { signingAlgsFor } from '../../domain/client-profile.js'
import { TOKEN_PATH } from '../../endpoints.js'

export interface TokenRouteDeps {
  authenticator: ClientAuthenticator
  service: TokenService
  dpop: DPoPVerifier
  /** This endpoint's URL as the issuer publishes it: what a proof's htu must name. */
  url: string
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const tokenRoutes: FastifyPluginAsync<TokenRouteDeps> = async (app, deps) => {
  app.post(TOKEN_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'client' } }, async (req, reply) => {
    const form = readForm(req, { rejectEmpty: true })
    checkInputLengths(form)
    const auth = await deps.authenticator.authenticate(req.headers, form, { address: req.ip, endpoint: TOKEN_PATH })
    const dpop = await deps.dpop.verify({
      header: req.headers.dpop,
      method: 'POST',
      url: deps.url,
      algorithms: signingAlgsFor(auth.client, DPOP_ALGS),
    })
    const res = await deps.service.exchange(auth, form, { address: req.ip, requestId: req.id, ...(dpop ? { dpop } : {}) })
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    // §8.2: the nonce for the client's next proof.
    const nonce = dpop && deps.dpop.currentNonce()
    if (nonce) reply.header('dpop-nonce', nonce)
    return res
  })
}
