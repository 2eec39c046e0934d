// GET / (and HEAD): the landing page. Unknown paths stay JSON 404s (src/http/server.ts).
import type { FastifyPluginAsync } from 'fastify'
import type { PageKit } from '../../http/page-kit.js'
import { HOME_PATH } from '../../endpoints.js'
import { renderLanding, type LandingView } from './pages.js'

export interface LandingRouteDeps {
  pages: PageKit
  view: LandingView
}

export const landingRoutes: FastifyPluginAsync<LandingRouteDeps> = async (app, { pages, view }) => {
  const page = renderLanding(view) // the same for everyone in a language
  app.get(HOME_PATH, pages.page, async (_req, reply) => pages.send(reply, page))
}
