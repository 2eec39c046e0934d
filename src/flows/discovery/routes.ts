// GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §4, RFC 8414 §3) and the
// JWKS it names (RFC 7517 §5). Both public and cacheable; the members come from the discovery
// service, which features extend without touching this route. Readable from any origin (CORS),
// so that a browser app can discover us.
import type { FastifyPluginAsync } from 'fastify'
import { type DiscoveryService } from './service.js'
import { DISCOVERY_PATH, OAUTH_METADATA_PATH, JWKS_PATH } from '../../endpoints.js'

export interface DiscoveryRouteDeps {
  discovery: DiscoveryService
}

export const discoveryRoutes: FastifyPluginAsync<DiscoveryRouteDeps> = async (app, { discovery }) => {
  const cacheControl = `public, max-age=${discovery.maxAge}`

  // RFC 8414 §3: the same document at the OAuth authorization server metadata path.
  for (const path of [DISCOVERY_PATH, OAUTH_METADATA_PATH]) {
    app.get(path, { config: { corsPolicy: 'public' } }, async (_req, reply) => {
      reply.header('cache-control', cacheControl).type('application/json; charset=utf-8')
      return discovery.document()
    })
  }

  // application/json rather than application/jwk-set+json (RFC 7517 §8.5.1): every client
  // library accepts it, and some reject the specific type.
  app.get(JWKS_PATH, { config: { corsPolicy: 'public' } }, async (_req, reply) => {
    reply.header('cache-control', cacheControl).type('application/json; charset=utf-8')
    return discovery.jwks()
  })
}
