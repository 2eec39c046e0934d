// The Fastify instance every flow registers on: logging, body limits, trusted proxies, timeouts,
// the edge (src/http/edge.ts), the one error handler, the form parser, rate limits, cookies and
// page headers. Nothing here knows a flow.
import formbody from '@fastify/formbody'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { OAuthError } from '../errors.js'
import type { Look } from '../pages/look.js'
import { clientErrorHandler, installEdgeChecks } from './edge.js'
import { createErrorHandler, registerErrorHandling, sendError } from './error-handler.js'
import { RequestLines } from './log-controller.js'
import { lazyChildLoggerFactory } from './logger.js'
import { registerCookies, registerPageHeaders } from './page-kit.js'
import { registerRateLimit } from './rate-limit.js'
import { requestIdOf } from './request-id.js'

/** 64 KiB: far above any legitimate OAuth request (Duende caps JWT parameters at 50 KiB). */
export const BODY_LIMIT = 64 * 1024

export async function createServer(config: Config, logger: Logger, look: Look): Promise<FastifyInstance> {
  const errorOpts = { issuer: config.issuer, look }
  const handleError = createErrorHandler(errorOpts)
  // Fastify takes its logger type from loggerInstance; the app is the FastifyInstance every
  // plugin and route module receives, whose logger is a FastifyBaseLogger (pino's Logger is one).
  const loggerInstance: FastifyBaseLogger = logger
  const app = Fastify({
    loggerInstance,
    childLoggerFactory: lazyChildLoggerFactory, // per-request loggers only when something is logged
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    requestIdHeader: false, // genReqId reads X-Request-Id itself, and keeps it only when plain
    genReqId: requestIdOf,
    logController: new RequestLines(config.logFormat), // probes' lines at debug; one line per request when pretty
    // The edge (src/http/edge.ts) answers in OAuth shape what Node and Fastify would answer themselves.
    return503OnClosing: false,
    clientErrorHandler,
    // The handler answers through the reply; Fastify does not use what it returns (the reply).
    frameworkErrors: (err, req, reply) => {
      handleError(err, req, reply)
    },
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    ...serverTimeouts(config),
  })
  // Beyond this many open connections the listener refuses more (Node drops them at accept), so
  // that held sockets cannot exhaust the process's file descriptors; 0: no cap.
  if (config.httpMaxConnections > 0) app.server.maxConnections = config.httpMaxConnections
  registerErrorHandling(app, errorOpts)
  installEdgeChecks(app)
  app.setNotFoundHandler((_req, reply) =>
    reply.send(sendError(reply, new OAuthError('not_found', 'no endpoint at this path for this method'))),
  )
  // Callback style: an async hook costs a promise and a turn of the microtask queue per request.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id)
    done(null, payload)
  })
  return app
}

/** The form parser, rate limits, cookies and page headers: registered after the metrics hooks. */
export async function registerRequestHandling(app: FastifyInstance, look: Look): Promise<void> {
  await app.register(formbody, { bodyLimit: BODY_LIMIT })
  await registerRateLimit(app)
  await registerCookies(app)
  registerPageHeaders(app, look)
}

/**
 * Bounds on every connection (Node's http.Server): the head within HTTP_HEADERS_TIMEOUT, the
 * whole request within HTTP_REQUEST_TIMEOUT (Node answers 408, in OAuth shape by the edge), an
 * idle keep-alive connection closed after HTTP_KEEP_ALIVE_TIMEOUT. Node checks the first two
 * every connectionsCheckingInterval, so that is kept well below them.
 */
function serverTimeouts(config: Config) {
  const ms = (s: number) => Math.round(s * 1000)
  return {
    requestTimeout: ms(config.httpRequestTimeout),
    keepAliveTimeout: ms(config.httpKeepAliveTimeout),
    http: {
      headersTimeout: ms(config.httpHeadersTimeout),
      connectionsCheckingInterval: Math.max(50, Math.min(1000, ms(config.httpHeadersTimeout) / 4)),
    },
  }
}
