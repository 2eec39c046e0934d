// Second factors: the second step of a sign-in (a passkey, one-time codes and recovery codes) and setting
// them up, and the acr values a request may ask for (discovery acr_values_supported). Who must use
// one is decided in src/interaction/authentication-level.ts, for every flow in which a person approves.
import type { Core, Flow } from '../../core.js'
import { ACCOUNT_PATH, ACCOUNT_TWO_STEP_PATH, SECOND_FACTOR_PATH } from '../../endpoints.js'
import { pageRateLimit } from '../../http/rate-limit.js'
import { AUTHENTICATION_LEVELS } from '../../interaction/authentication-level.js'
import { SATISFIED_ACR_VALUES } from '../../grants/acr-values.js'
import { twoStepRoutes } from './routes.js'
import { createTwoStepService } from './service.js'

export const secondFactorFlow: Flow = {
  name: 'second-factor',
  async register(core: Core) {
    const { returnTargets, sessions, pages } = core.interaction
    const twoStep = createTwoStepService({
      factors: core.secondFactors,
      passkeys: core.passkeys,
      sessions,
      users: core.stores.users,
      targets: returnTargets,
      audit: core.audit,
      accountPath: ACCOUNT_PATH,
      codePath: SECOND_FACTOR_PATH,
      enrolPath: ACCOUNT_TWO_STEP_PATH,
    })
    // A person sent to sign in from the enrolment page comes back to it; the sign-in page names
    // the application the enrolment is for (the enrolment's own return target).
    returnTargets.allow({
      path: ACCOUNT_TWO_STEP_PATH,
      describe: async (url) => (await returnTargets.resolve(url.searchParams.get('return_to') ?? undefined)) ?? {},
    })
    await core.app.register(twoStepRoutes, { pages, twoStep, rateLimit: pageRateLimit(core.config.rateLimitSignIn) })
    core.discovery.contribute(() => ({ acr_values_supported: [...AUTHENTICATION_LEVELS, ...SATISFIED_ACR_VALUES] }))
  },
}
