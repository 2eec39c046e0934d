// Token revocation (RFC 7009): a client revokes its own refresh or access token.
import { ASSERTION_ALGS } from '../../client-auth/assertion.js'
import { CLIENT_AUTH_METHODS } from '../../client-auth/authenticators.js'
import type { Core, Flow } from '../../core.js'
import { REVOCATION_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { revocationRoutes } from './routes.js'
import { createRevocationService } from './service.js'

export const revocationFlow: Flow = {
  name: 'revocation',
  async register(core: Core) {
    const { config, clock, keys, stores, audit } = core
    await core.app.register(revocationRoutes, {
      authenticator: core.clientAuth,
      rateLimit: apiRateLimit(config.rateLimitApi),
      revocation: createRevocationService({
        config,
        clock,
        keys,
        grants: stores.grants,
        oneTimeUse: core.oneTimeUse,
        revocations: stores.revocations,
        list: core.revocationList,
        audit,
      }),
    })
    core.discovery.contribute(() => ({
      revocation_endpoint: `${config.issuer}${REVOCATION_PATH}`,
      revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    }))
  },
}
