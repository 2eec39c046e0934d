// Fastify's request lines ("incoming request", "request completed") at info for every request but
// the health probes, which orchestrators send every few seconds: theirs are written at debug, so
// that LOG_LEVEL=info shows traffic, not heartbeats. A probe that fails still logs as usual.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { LIVENESS_PATH, READINESS_PATH } from '../endpoints.js'

const PROBE_PATHS = new Set([LIVENESS_PATH, READINESS_PATH])

export function isHealthProbe(req: { url?: string }): boolean {
  const url = req.url ?? ''
  const q = url.indexOf('?')
  return PROBE_PATHS.has(q < 0 ? url : url.slice(0, q))
}

export class ProbesAtDebug extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!isHealthProbe(request)) return super.incomingRequest(request, reply, metadata)
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error || !isHealthProbe(request)) return super.requestCompleted(error, request, reply, metadata)
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
