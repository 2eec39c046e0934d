// Discovery (OpenID Connect Discovery 1.0, RFC 8414) and the JWKS. The document lists what the
// other flows contribute through core.discovery, so it names only what is implemented.
import type { Core, Flow } from '../../core.js'
import { discoveryRoutes } from './routes.js'
import { createDiscoveryService } from './service.js'

export const discoveryFlow: Flow = {
  name: 'discovery',
  async register(core: Core) {
    const { config, keys, stores } = core
    const discovery = createDiscoveryService({
      config,
      keys,
      loadCatalogue: () => stores.resources.loadCatalogue(),
      contributions: core.discovery.contributions(),
    })
    await core.app.register(discoveryRoutes, { discovery })
  },
}
