// The token endpoint (RFC 6749 §3.2) and the grants that have no flow of their own:
// client_credentials (§4.4), refresh_token (§6) and password (§4.3). Other flows add their grants
// to the same registry (core.grants); buildApp adds the extension grants (§4.5, grants/extensions.ts)
// after every flow.
import { ASSERTION_ALGS } from '../../client-auth/assertion.js'
import { CLIENT_AUTH_METHODS } from '../../client-auth/authenticators.js'
import type { Core, Flow } from '../../core.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { createClientCredentialsGrant } from './grants/client-credentials.js'
import { createPasswordGrant } from './grants/password.js'
import { createLevelCheck } from '../../interaction/authentication-level.js'
import { createRefreshTokenGrant } from './grants/refresh-token.js'
import { tokenRoutes } from './routes.js'
import { TOKEN_PATH } from '../../endpoints.js'
import { DPOP_ALGS } from '../../tokens/dpop.js'
import { createTokenService } from './service.js'

export const tokenFlow: Flow = {
  name: 'token',
  async register(core: Core) {
    const { config, clock, stores, scopes, tokenIssuer, audit } = core
    core.grants.add(createClientCredentialsGrant({ scopes, tokenIssuer }))
    core.grants.add(
      createRefreshTokenGrant({
        clock,
        publicClientRefreshTokenLifetime: config.publicClientRefreshTokenLifetime,
        grants: stores.grants,
        oneTimeUse: core.oneTimeUse,
        users: stores.users,
        scopes,
        tokenIssuer,
        audit,
      }),
    )
    core.grants.add(
      createPasswordGrant({
        clock,
        passwords: core.passwordCheck,
        scopes,
        tokenIssuer,
        levels: createLevelCheck({ users: stores.users, factors: stores.userFactors, passkeys: core.passkeys }),
      }),
    )
    const service = createTokenService({ registry: core.grants, audit })
    await core.app.register(tokenRoutes, {
      authenticator: core.clientAuth,
      service,
      dpop: core.dpop,
      url: `${config.issuer}${TOKEN_PATH}`,
      rateLimit: apiRateLimit(config.rateLimitApi),
    })
    core.discovery.contribute(() => ({
      grant_types_supported: core.grants.grantTypes(),
      // RFC 8414 §2: every method of src/client-auth/authenticators.ts, and the assertions' algorithms.
      token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
      dpop_signing_alg_values_supported: [...DPOP_ALGS],
    }))
  },
}
