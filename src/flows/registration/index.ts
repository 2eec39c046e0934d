// Dynamic Client Registration (RFC 7591) and its management protocol (RFC 7592), as the
// REGISTRATION setting allows: off (no endpoint, no discovery member), open, or with an initial
// access token (`authz registration-tokens`). Registered clients are clients like any other,
// marked self-registered; one that obtains no token for REGISTERED_CLIENT_IDLE_LIFETIME is removed.
import type { Core, Flow } from '../../core.js'
import { REGISTRATION_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import type { CleanupTask } from '../../jobs/cleanup.js'
import type { ClientRegistrationStore } from '../../stores/client-registrations.js'
import { registrationRoutes, trackRegisteredClientUse } from './routes.js'
import { createRegistrationService } from './service.js'

/** The cleanup of registered clients unused for `idleSeconds` (registered by the flow; tests run it). */
export function idleRegisteredClients(registrations: ClientRegistrationStore, idleSeconds: number): CleanupTask {
  return {
    name: 'idleRegisteredClients',
    remove: (before, limit) => registrations.removeIdle(before, limit),
    retentionSeconds: idleSeconds,
  }
}

export const registrationFlow: Flow = {
  name: 'registration',
  async register(core: Core) {
    const { app, config, clock, stores } = core
    // Clients registered while registration was on stay until unused, also when it is off now.
    trackRegisteredClientUse(app, { clients: stores.clients, registrations: stores.clientRegistrations, clock })
    core.cleanup.add(idleRegisteredClients(stores.clientRegistrations, config.registeredClientIdleLifetime))
    if (config.registration === 'off') return
    const registration = createRegistrationService({
      config,
      clock,
      clients: stores.clients,
      registrations: stores.clientRegistrations,
      tokens: stores.registrationTokens,
      throttle: core.clientAuthThrottle,
      audit: core.audit,
    })
    await app.register(registrationRoutes, { registration, rateLimit: apiRateLimit(config.rateLimitRegistration) })
    core.discovery.contribute(() => ({ registration_endpoint: `${config.issuer}${REGISTRATION_PATH}` }))
  },
}
