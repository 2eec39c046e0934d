// Fastify's request lines ("incoming request", "request completed") at info for every request but
// the health probes, which orchestrators send every few seconds: theirs are written at debug, so
// that LOG_LEVEL=info shows traffic, not heartbeats. A probe that fails still logs as usual.
//
// With LOG_FORMAT=pretty a request is one line: "incoming request" moves to debug and "request
// completed" carries the method and URL besides the status and time (src/http/pretty-log.ts).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import type { LogFormat } from '../config.js'
import { LIVENESS_PATH, READINESS_PATH } from '../endpoints.js'

const PROBE_PATHS = new Set([LIVENESS_PATH, READINESS_PATH])

export function isHealthProbe(req: { url?: string }): boolean {
  const url = req.url ?? ''
  const q = url.indexOf('?')
  return PROBE_PATHS.has(q < 0 ? url : url.slice(0, q))
}

export class RequestLines extends LogController {
  readonly #oneLine: boolean

  constructor(format: LogFormat = 'json') {
    super()
    this.#oneLine = format === 'pretty'
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!this.#oneLine && !isHealthProbe(request)) return super.incomingRequest(request, reply, metadata)
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    const probe = !error && isHealthProbe(request)
    if (!this.#oneLine && !probe) return super.requestCompleted(error, request, reply, metadata)
    const line = { ...(this.#oneLine ? { req: request } : {}), res: reply, responseTime: reply.elapsedTime }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else if (probe) reply.log.debug(line, 'request completed')
    else reply.log.info(line, 'request completed')
  }
}
