// Federation: a person signs in through an upstream OpenID Connect provider of the seed file
// (identityProviders), for every interactive flow (they all use the one sign-in page, whose
// provider buttons lead here). The upstream's answer makes a local user (linked by scheme and
// upstream sub) and a session carrying idp and amr, as a password sign-in makes one.
import type { Core, Flow } from '../../core.js'
import { ACCOUNT_PATH } from '../../endpoints.js'
import { pageRateLimit } from '../../http/rate-limit.js'
import { createAccounts } from './accounts.js'
import { createFederationLogout } from './logout.js'
import { federationRoutes } from './routes.js'
import { createFederationService } from './service.js'
import { createUpstreams, DEFAULT_UPSTREAM_OPTIONS, type UpstreamOptions } from './upstream.js'

export type { UpstreamOptions } from './upstream.js'

/** `upstream`: settings other than the defaults (tests: a short timeout, an in-process fetch). */
export function federationFlow(options: { upstream?: Partial<UpstreamOptions> | undefined } = {}): Flow {
  return {
    name: 'federation',
    async register(core: Core) {
      const { config, clock, stores, audit } = core
      const upstreamOptions = { ...DEFAULT_UPSTREAM_OPTIONS, ...options.upstream }
      const upstreams = createUpstreams({ clock, keyEncryptionSecret: config.keyEncryptionSecret, options: upstreamOptions })
      // A provider changed anywhere (admin API, seed file): its upstream is read again at its next sign-in.
      core.configChanges.on('identityProviders', () => upstreams.forget())
      const federation = createFederationService({
        issuer: config.issuer,
        clock,
        providers: stores.identityProviders,
        store: stores.federatedIdentities,
        targets: core.interaction.returnTargets,
        sessions: core.interaction.sessions,
        upstreams,
        accounts: createAccounts(stores.federatedIdentities),
        audit,
        accountPath: ACCOUNT_PATH,
      })
      const logout = createFederationLogout({
        issuer: config.issuer,
        clock,
        providers: stores.identityProviders,
        upstreams,
        sessions: stores.userSessions,
        usedJtis: stores.usedJtis,
        audit,
        options: upstreamOptions,
        secret: await core.serverSecret('federation-signout'),
      })
      core.interaction.upstreamSignOut.provide({ url: logout.signOutUrl, origin: logout.signOutOrigin })
      await core.app.register(federationRoutes, {
        pages: core.interaction.pages,
        federation,
        logout,
        // Each start stores a request: limited per address like the sign-in form (RATE_LIMIT_SIGN_IN).
        challengeRateLimit: pageRateLimit(config.rateLimitSignIn),
      })
      core.cleanup.add({ name: 'federationRequests', remove: stores.federatedIdentities.removeExpiredRequests })
    },
  }
}
