// Client-Initiated Backchannel Authentication (OpenID CIBA Core 1.0): the backchannel
// authentication endpoint, the page where the person approves, the token grant the client polls
// (poll and ping modes), and the worker that pings or pushes to the client (ping and push modes).
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
import { createCibaGrant, createCibaIssue } from './grant.js'
import { CIBA_DELIVERY_WORKER, createCibaDeliveryWorker, type CibaDeliveryOptions } from './delivery.js'
import { createSealer } from './sealed.js'
import { createLogNotifier, createWebhookNotifier, type CibaNotifier } from './notifier.js'
import { createClientJwtVerifier, REQUEST_OBJECT_ALGS } from './request-object.js'
import { cibaRoutes } from './routes.js'
import { createCibaService } from './service.js'

/**
 * `notifier`: how the person is told; default the webhook when CIBA_NOTIFICATION_URL is set, else
 * the log. `delivery`: ping and push delivery settings other than the defaults (tests).
 */
export function cibaFlow(options: { notifier?: CibaNotifier | undefined; delivery?: Partial<CibaDeliveryOptions> | undefined } = {}): Flow {
  return {
    name: 'ciba',
    async register(core: Core) {
      const { app, config, clock, stores, scopes, audit } = core
      const notifier = options.notifier ?? defaultNotifier(config, clock, core.logger)
      // Shutdown waits a little for notifications in flight, never for their retry back-off.
      app.addHook('onClose', async () => {
        await Promise.race([notifier.drain(), new Promise((r) => setTimeout(r, 2000).unref())])
      })
      const sealer = createSealer(config.keyEncryptionSecret)
      const ciba = createCibaService({
        config,
        sealer,
        clock,
        users: stores.users,
        requests: stores.cibaRequests,
        scopes,
        keys: core.keys,
        notifier,
        audit,
        clientJwts: createClientJwtVerifier({ clock, issuer: config.issuer, usedJtis: stores.usedJtis, keys: core.clientKeys }),
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
        levels: createLevelCheck({ users: stores.users, factors: stores.userFactors, passkeys: core.passkeys }),
      })
      core.interaction.returnTargets.allow({ path: CIBA_APPROVE_PATH, describe: approval.describe })
      await app.register(cibaApproveRoutes, { approval, pages: core.interaction.pages })
      const grantDeps = {
        clock,
        requests: stores.cibaRequests,
        polling: core.polling,
        users: stores.users,
        scopes,
        tokenIssuer: core.tokenIssuer,
      }
      core.grants.add(createCibaGrant(grantDeps))
      core.workers.add(
        CIBA_DELIVERY_WORKER,
        createCibaDeliveryWorker({
          clock,
          store: stores.cibaDeliveries,
          requests: stores.cibaRequests,
          clients: stores.clients,
          issue: createCibaIssue(grantDeps),
          oneTimeUse: core.oneTimeUse,
          sealer,
          logger: core.logger,
          audit,
          options: options.delivery,
        }),
      )
      core.cleanup.add({ name: 'cibaDeliveries', remove: stores.cibaDeliveries.removeExpired })
      core.cleanup.add({ name: 'cibaRequests', remove: stores.cibaRequests.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS })
      core.discovery.contribute(() => ({
        backchannel_authentication_endpoint: `${config.issuer}${CIBA_PATH}`,
        backchannel_token_delivery_modes_supported: ['poll', 'ping', 'push'],
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
