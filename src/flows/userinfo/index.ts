// The UserInfo endpoint (OpenID Connect Core §5.3): the claims of the user an access token is for.
import type { Core, Flow } from '../../core.js'
import { USERINFO_PATH } from '../../endpoints.js'
import { apiRateLimit } from '../../http/rate-limit.js'
import { userinfoRoutes } from './routes.js'
import { createUserinfoService } from './service.js'

export const userinfoFlow: Flow = {
  name: 'userinfo',
  async register(core: Core) {
    const { config, stores } = core
    await core.app.register(userinfoRoutes, {
      userinfo: createUserinfoService({
        config,
        reader: core.tokenReader,
        users: stores.users,
        resources: stores.resources,
        dpop: core.dpop,
        url: `${config.issuer}${USERINFO_PATH}`,
      }),
      realm: config.issuer,
      rateLimit: apiRateLimit(config.rateLimitApi),
    })
    core.discovery.contribute(() => ({ userinfo_endpoint: `${config.issuer}${USERINFO_PATH}` }))
  },
}
