// The stylesheet of every page, in the operator's colour, at a content-addressed path (src/pages/style.ts): cacheable for
// good, and the only style source the pages' Content-Security-Policy allows. Likewise the scripts of the
// passkey forms (src/pages/scripts.ts), the only script source of the pages that load them.
import type { FastifyPluginAsync } from 'fastify'
import type { Look } from '../pages/look.js'

export const assetRoutes: FastifyPluginAsync<{ look: Look }> = async (app, { look }) => {
  app.get(look.stylesheet.path, async (_req, reply) =>
    reply
      .headers({
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(look.stylesheet.css),
  )
  for (const script of look.scripts.passkeys) {
    app.get(script.path, async (_req, reply) =>
      reply
        .headers({
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'public, max-age=31536000, immutable',
          'x-content-type-options': 'nosniff',
        })
        .send(script.js),
    )
  }
}
