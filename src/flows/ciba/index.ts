// Client-Initiated Backchannel Authentication (OpenID CIBA Core 1.0), poll mode: the
// backchannel authentication endpoint, the page where the person approves, and the token grant
// the client polls.
import type { Config } from '../../config.js'
import type { Core, Flow } from '../../core.js'
import type { Clock } from '../../domain/clock.js'
import { CIBA_APPROVE_PATH, CIBA_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { createUserCodeCheck, userCodePolicy } from '../../interaction/user-code-check.js'
import { CIBA_RETENTION_SECONDS } from '../../jobs/cleanup.js'
import type { Logger } from 'pino'
import { createCibaApproval } from './approval.js'
import { createLevelCheck } from '../../interaction/authentication-level.js'
import { cibaApproveRoutes } from './approval-routes.js'
import { createCibaGrant } from './grant.js'
import { createLogNotifier, createWebhookNotifier, type CibaNotifier } from './notifier.js'
import { createClientJwtVerifier, REQUEST_OBJECT_ALGS } from './request-object.js'
import { cibaRoutes } from './routes.js'
import { createCibaService } from './service.js'

/** `notifier`: how the person is told; default the webhook when CIBA_NOTIFICATION_URL is set, else the log. */
export function cibaFlow(options: { notifier?: CibaNotifier | undefined } = {}): Flow {
  return {
    name: 'ciba',
    async register(core: Core) {
      const { app, config, clock, stores, scopes, audit } = core
      const notifier = options.notifier ?? defaultNotifier(config, clock, core.logger)
      // Shutdown waits a little for notifications in flight, never for their retry back-off.
      app.addHook('onClose', async () => {
        await Promise.race([notifier.drain(), new Promise((r) => setTimeout(r, 2000).unref())])
      })
      const ciba = createCibaService({
        config,
        clock,
        users: stores.users,
        requests: stores.cibaRequests,
        scopes,
        keys: core.keys,
        notifier,
        audit,
        clientJwts: createClientJwtVerifier({ clock, issuer: config.issuer, usedJtis: stores.usedJtis }),
        userCodes: createUserCodeCheck({ failures: stores.failures, clock, logger: app.log, policy: userCodePolicy(config) }),
        providers: core.interaction.providers,
      })
      await app.register(cibaRoutes, { authenticator: core.clientAuth, ciba, rateLimit: apiRateLimit(config.rateLimitApi) })
      const approval = createCibaApproval({
        clock,
        requests: stores.cibaRequests,
        clients: stores.clients,
        resources: stores.resources,
        audit,
        levels: createLevelCheck({ users: stores.users, factors: stores.userFactors }),
      })
      core.interaction.returnTargets.allow({ path: CIBA_APPROVE_PATH, describe: approval.describe })
      await app.register(cibaApproveRoutes, { approval, pages: core.interaction.pages })
      core.grants.add(
        createCibaGrant({
          clock,
          requests: stores.cibaRequests,
          polling: core.polling,
          users: stores.users,
          scopes,
          tokenIssuer: core.tokenIssuer,
        }),
      )
      core.cleanup.add({ name: 'cibaRequests', remove: stores.cibaRequests.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS })
      core.cleanup.add({ name: 'usedJtis', remove: stores.usedJtis.removeExpired })
      core.discovery.contribute(() => ({
        backchannel_authentication_endpoint: `${config.issuer}${CIBA_PATH}`,
        backchannel_token_delivery_modes_supported: ['poll'],
        backchannel_user_code_parameter_supported: true,
        backchannel_authentication_request_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
      }))
    },
  }
}

/** The webhook when CIBA_NOTIFICATION_URL is set, else the approval URL in the log (development). */
function defaultNotifier(config: Config, clock: Clock, logger: Logger): CibaNotifier {
  return config.cibaNotificationUrl && config.cibaNotificationSecret
    ? createWebhookNotifier({ url: config.cibaNotificationUrl, secret: config.cibaNotificationSecret, clock, logger })
    : createLogNotifier({ logger })
}
