// The stylesheet of every page, at a content-addressed path (src/pages/style.ts): cacheable for
// good, and the only style source the pages' Content-Security-Policy allows.
import type { FastifyPluginAsync } from 'fastify'
import { STYLESHEET, STYLESHEET_PATH } from '../pages/style.js'

export const assetRoutes: FastifyPluginAsync = async (app) => {
  app.get(STYLESHEET_PATH, async (_req, reply) =>
    reply
      .headers({
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(STYLESHEET),
  )
}
