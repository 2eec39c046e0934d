// The device authorization grant (RFC 8628): the device authorization endpoint, the page where the
// person types the code and decides, and the device_code token grant.
import type { Core, Flow } from '../../core.js'
import { DEVICE_AUTHORIZATION_PATH, DEVICE_PATH } from '../../endpoints.js'
import { apiRateLimit, pageRateLimit } from '../../http/rate-limit.js'
import { createDeviceUserCodeThrottle, userCodePolicy } from '../../interaction/user-code-check.js'
import { CIBA_RETENTION_SECONDS } from '../../jobs/cleanup.js'
import { createDeviceAuthorization } from './authorization.js'
import { deviceAuthorizationRoutes } from './authorization-routes.js'
import { createDeviceCodeGrant } from './grant.js'
import { createDeviceVerification } from './verification.js'
import { createLevelCheck } from '../../interaction/authentication-level.js'
import { deviceRoutes } from './verification-routes.js'

export const deviceFlow: Flow = {
  name: 'device',
  async register(core: Core) {
    const { app, config, clock, stores, scopes, audit } = core
    const devices = createDeviceAuthorization({ config, clock, devices: stores.devices, scopes })
    await app.register(deviceAuthorizationRoutes, { authenticator: core.clientAuth, devices, rateLimit: apiRateLimit(config.rateLimitApi) })
    const verification = createDeviceVerification({
      clock,
      devices: stores.devices,
      clients: stores.clients,
      resources: stores.resources,
      levels: createLevelCheck({ users: stores.users, factors: stores.userFactors, passkeys: core.passkeys }),
      audit,
      throttle: createDeviceUserCodeThrottle({ failures: stores.failures, clock, logger: app.log, policy: userCodePolicy(config) }),
    })
    core.interaction.returnTargets.allow({ path: DEVICE_PATH, describe: verification.describe })
    await app.register(deviceRoutes, { verification, pages: core.interaction.pages, rateLimit: pageRateLimit(config.rateLimitSignIn) })
    core.grants.add(
      createDeviceCodeGrant({
        clock,
        devices: stores.devices,
        polling: core.polling,
        users: stores.users,
        scopes,
        tokenIssuer: core.tokenIssuer,
      }),
    )
    // Kept as long as CIBA requests past expiry: a late poll still gets expired_token, a replay still revokes.
    core.cleanup.add({ name: 'deviceAuthorizations', remove: stores.devices.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS })
    core.discovery.contribute(() => ({ device_authorization_endpoint: `${config.issuer}${DEVICE_AUTHORIZATION_PATH}` }))
  },
}
