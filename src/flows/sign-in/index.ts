// The sign-in and sign-out pages: the one place a person signs in, for every flow
// that needs it (the flows register their pages as return targets on core.interaction).
import type { Core, Flow } from '../../core.js'
import { ACCOUNT_PATH } from '../../endpoints.js'
import { pageRateLimit } from '../../http/rate-limit.js'
import { createSignInService } from '../../interaction/sign-in.js'
import { createPasskeySignIn } from './passkey.js'
import { passkeyRoutes } from './passkey-routes.js'
import { signInRoutes } from './routes.js'

export const signInFlow: Flow = {
  name: 'sign-in',
  async register(core: Core) {
    const { pages, sessions, returnTargets, providers } = core.interaction
    const signIn = createSignInService({
      passwordCheck: core.passwordCheck,
      sessions,
      targets: returnTargets,
      providers,
      accountPath: ACCOUNT_PATH,
      factors: core.stores.userFactors,
      passkeys: core.passkeys,
    })
    const passkeySignIn = createPasskeySignIn({ passkeys: core.passkeys, sessions, targets: returnTargets, accountPath: ACCOUNT_PATH })
    await core.app.register(signInRoutes, {
      pages,
      signIn,
      passkeySignIn,
      signInRateLimit: pageRateLimit(core.config.rateLimitSignIn),
      upstreamSignOut: core.interaction.upstreamSignOut,
    })
    await core.app.register(passkeyRoutes, { pages, passkeySignIn, signInRateLimit: pageRateLimit(core.config.rateLimitSignIn) })
  },
}
