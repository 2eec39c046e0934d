// The account pages: a person's own control panel (the apps that can reach their account, their
// sessions, their password). The sign-in page lands here when no flow is waiting.
import type { Core, Flow } from '../../core.js'
import { ACCOUNT_PASSWORD_PATH } from '../../endpoints.js'
import { pageRateLimit } from '../../http/rate-limit.js'
import { createAppAccess } from '../../interaction/app-access.js'
import { createAccountPasskeys } from './passkeys.js'
import { accountRoutes } from './routes.js'
import { createLevelCheck, stepUpUrl } from '../../interaction/authentication-level.js'
import { createAccountService } from './service.js'

export const accountFlow: Flow = {
  name: 'account',
  async register(core: Core) {
    const { stores, clock } = core
    const levels = createLevelCheck({ users: stores.users, factors: stores.userFactors, passkeys: core.passkeys })
    const passkeys = createAccountPasskeys({ passkeys: core.passkeys, sessions: core.interaction.sessions })
    const account = createAccountService({
      clock,
      apps: createAppAccess({ clock, consent: core.consent, grants: stores.grants, oneTimeUse: core.oneTimeUse }),
      clients: stores.clients,
      resources: stores.resources,
      users: stores.users,
      sessions: core.interaction.sessions,
      passwordCheck: core.passwordCheck,
      audit: core.audit,
      secondFactors: core.secondFactors,
      providerName: async (scheme) => (await stores.identityProviders.findByScheme(scheme))?.displayName,
      passkeys,
    })
    // A person sent to sign in from the password page comes back to it.
    core.interaction.returnTargets.allow({ path: ACCOUNT_PASSWORD_PATH, describe: async () => ({}) })
    await core.app.register(accountRoutes, {
      pages: core.interaction.pages,
      account,
      passkeys,
      passwordRateLimit: pageRateLimit(core.config.rateLimitSignIn),
      upstreamSignOut: core.interaction.upstreamSignOut,
      // A person with a second factor uses it before their account page, whatever the session.
      stepUp: async (session, returnTo) => {
        const step = await levels.next(session, {})
        return step === 'none' ? undefined : stepUpUrl(step, returnTo)
      },
    })
  },
}
