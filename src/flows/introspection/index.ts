// Token introspection (RFC 7662), called by API resources with their own secrets; RFC 9701
// signed answers on Accept: application/token-introspection+jwt.
import { createIntrospectionCallerAuthenticator } from '../../client-auth/authenticators.js'
import type { Core, Flow } from '../../core.js'
import { INTROSPECTION_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { introspectRoutes } from './routes.js'
import { createIntrospectionService } from './service.js'

export const introspectionFlow: Flow = {
  name: 'introspection',
  async register(core: Core) {
    const { config, clock, stores, keys } = core
    await core.app.register(introspectRoutes, {
      rateLimit: apiRateLimit(config.rateLimitApi),
      ...(core.metrics ? { countResult: core.metrics.introspection } : {}),
      callers: createIntrospectionCallerAuthenticator({
        clients: stores.clients,
        resources: stores.resources,
        clock,
        realm: config.issuer,
        throttle: core.clientAuthThrottle,
      }),
      introspection: createIntrospectionService({
        config,
        clock,
        keys,
        grants: stores.grants,
        revocations: core.revocationList,
        clients: stores.clients,
        users: stores.users,
        reader: core.tokenReader,
      }),
    })
    core.discovery.contribute(() => ({
      introspection_endpoint: `${config.issuer}${INTROSPECTION_PATH}`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_signing_alg_values_supported: [config.accessTokenSigningAlg],
    }))
  },
}
