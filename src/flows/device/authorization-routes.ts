// POST /connect/deviceauthorization: RFC 8628 §3.1 device authorization endpoint. Client
// authentication as at the token endpoint (public clients identify with client_id alone, §3.1);
// errors as RFC 6749 §5.2 (invalid_client 401, the rest 400), every response no-store.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import type { ClientAuthenticator } from '../../client-auth/authenticators.js'
import { readForm } from '../../http/form.js'
import type { DeviceAuthorizationService } from './authorization.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { DEVICE_AUTHORIZATION_PATH } from '../../endpoints.js'

export interface DeviceAuthorizationRouteDeps {
  authenticator: ClientAuthenticator
  devices: DeviceAuthorizationService
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const deviceAuthorizationRoutes: FastifyPluginAsync<DeviceAuthorizationRouteDeps> = async (app, deps) => {
  app.post(DEVICE_AUTHORIZATION_PATH, { config: { rateLimit: deps.rateLimit, corsPolicy: 'client' } }, async (req, reply) => {
    const form = readForm(req)
    checkInputLengths(form)
    const { client } = await deps.authenticator.authenticate(req.headers, form, { address: req.ip, endpoint: DEVICE_AUTHORIZATION_PATH })
    const res = await deps.devices.start(client, form, req.ip)
    // verification_uri without the user code: the code is the device's to show (it is redacted).
    req.log.info(
      { client_id: client.clientId, verification_uri: res.verification_uri },
      'device authorization started: the user enters the code at verification_uri',
    )
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    return res
  })
}
