// Pushed authorization requests (RFC 9126): the endpoint a client pushes its authorization
// request to, the cleanup of held requests, and the discovery members. The authorization
// endpoint takes the request_uri (src/flows/authorization-code/, src/interaction/pushed-authorization.ts).
import type { Core, Flow } from '../../core.js'
import { PAR_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { createAuthorizationInputs, SIGN_IN_WINDOW_SECONDS } from '../../interaction/pushed-authorization.js'
import { createRequestObjectVerifier } from '../../interaction/request-object.js'
import { parRoutes } from './routes.js'
import { createPushedAuthorizationService } from './service.js'

export const parFlow: Flow = {
  name: 'par',
  async register(core: Core) {
    const { config, clock, stores } = core
    const requestObjects = createRequestObjectVerifier({
      clock,
      issuer: config.issuer,
      usedJtis: stores.usedJtis,
      keys: core.clientKeys,
    })
    const par = createPushedAuthorizationService({
      clients: stores.clients,
      scopes: core.scopes,
      providers: core.interaction.providers,
      requestObjects,
      inputs: createAuthorizationInputs({ clock, clients: stores.clients, pushed: stores.pushedRequests, requestObjects }),
    })
    await core.app.register(parRoutes, {
      authenticator: core.clientAuth,
      par,
      dpop: core.dpop,
      url: `${config.issuer}${PAR_PATH}`,
      rateLimit: apiRateLimit(config.rateLimitApi),
    })
    // Kept past expiry as long as a person may still be signing in, so that a late arrival is
    // told invalid_request_uri at its redirect URI rather than on a page.
    core.cleanup.add({
      name: 'pushedAuthorizationRequests',
      remove: stores.pushedRequests.removeExpired,
      retentionSeconds: SIGN_IN_WINDOW_SECONDS,
    })
    core.discovery.contribute(() => ({
      pushed_authorization_request_endpoint: `${config.issuer}${PAR_PATH}`,
      require_pushed_authorization_requests: config.parRequired,
    }))
  },
}
