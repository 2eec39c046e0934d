// Logout: RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) ends the person's session,
// and back-channel logout (OpenID Connect Back-Channel Logout 1.0) tells every application that
// took part in it, from a queue that a background worker delivers.
import type { Core, Flow } from '../../core.js'
import { END_SESSION_PATH } from '../../endpoints.js'
import { createBackchannelLogoutWorker, type BackchannelLogoutOptions } from './backchannel-logout.js'
import { endSessionRoutes } from './routes.js'
import { createEndSessionService } from './service.js'

export const BACKCHANNEL_LOGOUT_WORKER = 'backchannel-logout'

/** `backchannelLogout`: delivery settings other than the defaults (tests: short timeouts, a fetch). */
export function logoutFlow(options: { backchannelLogout?: Partial<BackchannelLogoutOptions> | undefined } = {}): Flow {
  return {
    name: 'logout',
    async register(core: Core) {
      const { config, clock, stores, keys, logger, audit } = core
      const endSession = createEndSessionService({ issuer: config.issuer, clients: stores.clients, keys })
      await core.app.register(endSessionRoutes, {
        endSession,
        pages: core.interaction.pages,
        upstreamSignOut: core.interaction.upstreamSignOut,
      })
      const worker = createBackchannelLogoutWorker({
        issuer: config.issuer,
        clock,
        store: stores.backchannelLogouts,
        clients: stores.clients,
        keys,
        logger,
        audit,
        ...(options.backchannelLogout ? { options: options.backchannelLogout } : {}),
      })
      core.workers.add(BACKCHANNEL_LOGOUT_WORKER, worker)
      core.cleanup.add({ name: 'backchannelLogouts', remove: stores.backchannelLogouts.removeExpired })
      core.discovery.contribute(() => ({
        end_session_endpoint: `${config.issuer}${END_SESSION_PATH}`,
        // Back-Channel Logout 1.0 §2.1: logout tokens are sent, always with sid (as ID tokens carry it).
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
      }))
    },
  }
}
