// The landing page at the issuer's root: the way to the account page, the device page, the
// discovery document and the documentation, so that opening the server's address shows a page.
import type { Core, Flow } from '../../core.js'
import { landingRoutes } from './routes.js'

export const landingFlow: Flow = {
  name: 'landing',
  async register(core: Core) {
    const { config } = core
    await core.app.register(landingRoutes, {
      pages: core.interaction.pages,
      view: { issuer: config.issuer, documentationUrl: config.documentationUrl },
    })
  },
}
