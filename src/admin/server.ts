// The admin API's listener: a Fastify instance of its own on ADMIN_HOST:ADMIN_PORT, so that the
// public listener never serves it (a reverse proxy forwarding everything to PORT cannot expose
// it), as the metrics listener does (src/observe/metrics-server.ts). Every request is
// authenticated first (src/admin/auth.ts: reads need authz:admin:read or authz:admin, everything
// else authz:admin); every answer is JSON with no-store, every error an RFC 9457 problem.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { chmod } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { ADMIN_OPENAPI_PATH } from '../endpoints.js'
import { isUnavailable } from '../errors.js'
import { openApiDocument } from './openapi.js'
import { createAdminAuth, createLocalAuth } from './auth.js'
import { catalogueRoutes } from './catalogue-routes.js'
import { cibaRoutes } from './ciba-routes.js'
import { clientRoutes } from './clients-routes.js'
import type { AdminDeps } from './deps.js'
import { identityProviderRoutes } from './identity-providers-routes.js'
import { keyAndConsentRoutes } from './keys-consents-routes.js'
import { AdminProblem } from './problem.js'
import './request.js'
import { registrationTokenRoutes } from './registration-tokens-routes.js'
import { seedRoutes } from './seed-routes.js'
import { userFactorRoutes } from './user-factors-routes.js'
import { userRoutes } from './users-routes.js'

/** A whole seed document fits; far above any one resource. */
export const ADMIN_BODY_LIMIT = 1024 * 1024

export interface AdminListener {
  /** The admin app, for app.inject in tests. */
  app: FastifyInstance
  /** Every route registered (method and Fastify path), HEAD left out: what the OpenAPI document must hold. */
  routes: readonly { method: string; url: string }[]
  /** Starts listening; resolves to the bound address (port 0: a free one). */
  listen(port: number, host: string): Promise<AddressInfo>
  /** Starts listening on a Unix socket at `path`, which only the owner may connect to (0600). */
  listenSocket(path: string): Promise<void>
  address(): AddressInfo | undefined
  close(): Promise<void>
}

export interface AdminServerOptions {
  logger: Logger
  requestTimeoutSeconds: number
  /** The local CLI's listener (src/admin/local-access.ts): this credential is the only one it takes. */
  localCredential?: string
}

export async function createAdminServer(deps: AdminDeps, opts: AdminServerOptions): Promise<AdminListener> {
  const loggerInstance: FastifyBaseLogger = opts.logger.child({ listener: 'admin' })
  const app = Fastify({
    loggerInstance,
    bodyLimit: ADMIN_BODY_LIMIT,
    requestTimeout: Math.round(opts.requestTimeoutSeconds * 1000),
    forceCloseConnections: true,
    routerOptions: { ignoreTrailingSlash: true },
  })
  const authenticate = opts.localCredential === undefined ? createAdminAuth(deps) : createLocalAuth(deps, opts.localCredential)
  app.decorateRequest('adminCaller', null)
  app.addHook('onRequest', async (req) => {
    const need = req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write'
    const credentials = {
      authorization: req.headers.authorization,
      dpop: req.headers.dpop,
      method: req.method,
      url: `${req.protocol}://${req.host}${req.url}`,
    }
    req.adminCaller = await authenticate(credentials, need, req.ip)
  })
  app.addHook('onSend', async (req, reply) => {
    reply.header('cache-control', 'no-store')
    // RFC 9449 §8.2: the nonce for the client's next proof, when nonces are required.
    const nonce =
      req.headers.authorization !== undefined && /^dpop /i.test(req.headers.authorization) ? deps.dpop.currentNonce() : undefined
    if (nonce !== undefined && !reply.hasHeader('dpop-nonce')) reply.header('dpop-nonce', nonce)
  })
  app.setErrorHandler((err, req, reply) => {
    const problem = toProblem(err)
    if (problem.status >= 500 && problem.status !== 503) req.log.error({ err }, 'admin request failed')
    return reply
      .code(problem.status)
      .headers(problem.opts.headers ?? {})
      .type('application/problem+json')
      .send(problem.body())
  })
  app.setNotFoundHandler(async () => {
    throw new AdminProblem(404, 'no admin resource at this path for this method')
  })
  const routes: { method: string; url: string }[] = []
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url })
  })
  const document = openApiDocument()
  app.get(ADMIN_OPENAPI_PATH, async () => document)
  await app.register(clientRoutes, { deps })
  await app.register(userRoutes, { deps })
  await app.register(catalogueRoutes, { deps })
  await app.register(seedRoutes, { deps })
  await app.register(keyAndConsentRoutes, { deps })
  await app.register(cibaRoutes, { deps })
  await app.register(identityProviderRoutes, { deps })
  await app.register(registrationTokenRoutes, { deps })
  await app.register(userFactorRoutes, { deps })
  await app.ready()

  return {
    app,
    routes,
    async listen(port, host) {
      await app.listen({ port, host })
      return app.server.address() as AddressInfo
    },
    async listenSocket(path) {
      // Its directory (DATA_DIR, 0700) already keeps other users out; 0600 says so on the file too.
      await app.listen({ path })
      await chmod(path, 0o600)
    },
    address: () => (app.server.listening && typeof app.server.address() === 'object' ? (app.server.address() as AddressInfo) : undefined),
    close: () => app.close(),
  }
}

/** Anything thrown, as a problem: ours as they are, Fastify's 4xx with their status, the rest 500 (logged, never sent). */
function toProblem(err: unknown): AdminProblem {
  if (err instanceof AdminProblem) return err
  if (isUnavailable(err))
    return new AdminProblem(503, 'the database is not answering: try again shortly', { headers: { 'retry-after': '5' } })
  const status = typeof err === 'object' && err !== null && 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500
  if (status === 415) return new AdminProblem(415, 'the request body must be application/json')
  if (status === 413) return new AdminProblem(413, 'the request body is too large')
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) {
    return new AdminProblem(400, 'the request body is not valid JSON', { errors: [{ path: '(root)', detail: 'not valid JSON' }] })
  }
  if (status >= 400 && status < 500) return new AdminProblem(400, 'the request is not valid')
  return new AdminProblem(500, 'the server could not complete the request')
}
