// POST /connect/register (RFC 7591 §3) and GET, PUT, DELETE on the registration_client_uri
// (RFC 7592 §2), JSON in and out; every answer no-store (RFC 7591 §3.2.1, RFC 7592 §3).
// A browser app (a single-page MCP client) may register and manage itself from any origin: CORS
// policy 'bearer' (src/http/cors.ts), since access is by the token the request carries, never a cookie.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onResponseAsyncHookHandler } from 'fastify'
import { readClientCredentials } from '../../client-auth/credentials.js'
import { REGISTRATION_CLIENT_PATH, REGISTRATION_PATH, TOKEN_PATH } from '../../endpoints.js'
import type { ClientRegistrationStore } from '../../stores/client-registrations.js'
import type { ClientStore } from '../../stores/clients.js'
import type { Clock } from '../../domain/clock.js'
import { isUnavailable } from '../../errors.js'
import type { RegistrationService } from './service.js'

export interface RegistrationRouteDeps {
  registration: RegistrationService
  /** Registrations per address (RATE_LIMIT_REGISTRATION); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

/** RFC 6750 §2.1: the token of an `Authorization: Bearer` header; undefined when there is none. */
function bearer(req: FastifyRequest): string | undefined {
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(req.headers.authorization ?? '')
  return m?.[1]
}

const caller = (req: FastifyRequest) => ({ address: req.ip, requestId: req.id })
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
const BEARER_CORS = { config: { corsPolicy: 'bearer' as const } }
const clientIdOf = (req: FastifyRequest) => (req.params as { clientId: string }).clientId

export const registrationRoutes: FastifyPluginAsync<RegistrationRouteDeps> = async (app, deps) => {
  const { registration } = deps
  app.post(REGISTRATION_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'bearer' } }, async (req, reply) => {
    const body = await registration.register(req.body, bearer(req), caller(req))
    return noStore(reply).code(201).send(body)
  })
  app.get(REGISTRATION_CLIENT_PATH, BEARER_CORS, async (req, reply) => {
    const body = await registration.read(clientIdOf(req), bearer(req), caller(req))
    return noStore(reply).code(200).send(body)
  })
  app.put(REGISTRATION_CLIENT_PATH, BEARER_CORS, async (req, reply) => {
    const body = await registration.update(clientIdOf(req), bearer(req), req.body, caller(req))
    return noStore(reply).code(200).send(body)
  })
  app.delete(REGISTRATION_CLIENT_PATH, BEARER_CORS, async (req, reply) => {
    await registration.remove(clientIdOf(req), bearer(req), caller(req))
    return noStore(reply).code(204).send()
  })
}

/**
 * Records that a registered client obtained a token, after the answer is sent, so that the
 * cleanup removes only the clients nobody uses. Added on the app before the token endpoint, so
 * that it sees that route, and attached to that route alone: no other request pays for it, and a
 * client that is not self-registered costs a cached lookup.
 */
export function trackRegisteredClientUse(
  app: FastifyInstance,
  deps: { clients: Pick<ClientStore, 'findById'>; registrations: Pick<ClientRegistrationStore, 'touch'>; clock: Clock },
): void {
  const recordUse: onResponseAsyncHookHandler = async (req, reply) => {
    if (reply.statusCode !== 200) return
    try {
      const form = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, string>
      const id = readClientCredentials(req.headers, form, {})?.id
      if (id === undefined || (await deps.clients.findById(id))?.selfRegistered !== 'registration') return
      await deps.registrations.touch(id, deps.clock.now())
    } catch (err) {
      if (!isUnavailable(err)) req.log.warn({ err }, 'recording the use of a registered client failed')
    }
  }
  app.addHook('onRoute', (route) => {
    if (route.url !== TOKEN_PATH || ![route.method].flat().includes('POST')) return
    route.onResponse = [...[route.onResponse ?? []].flat(), recordUse]
  })
}
