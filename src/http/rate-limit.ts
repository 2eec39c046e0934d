// Per-address request rate limits (@fastify/rate-limit, in memory: per replica and per endpoint).
// A route opts in with `config: { rateLimit: apiRateLimit(n) }` or `pageRateLimit(n)`; without
// it nothing is limited. 429 (RFC 6585 §4) with Retry-After; OAuth endpoints answer
// temporarily_unavailable, the closest RFC 6749 §5.2 code, pages a plain HTML page. These limits
// only stop floods: the lockout and the client authentication throttle, shared by every replica
// through Postgres, stop slow guessing. "Per address" is per throttle unit (src/domain/address.ts):
// an IPv6 host is counted by its /64, so rotating through its own addresses (RFC 8981) buys no
// fresh allowance.
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { throttleAddress } from '../domain/address.js'
import { OAuthError } from '../errors.js'
import { tooManyAttemptsPage } from '../pages/message.js'
import { PageResponseError } from './error-handler.js'
import { fromAnotherSite } from './fetch-metadata.js'

const MINUTE = 60_000

/** Registers the plugin, applied only to the routes that opt in. Call before those routes are added. */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    // Nothing is added to answers under the limit: the hot paths stay as they are.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    addHeaders: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false, 'retry-after': true },
  })
}

/** Route config for an OAuth endpoint: perMinute requests per address; undefined (no limit) for 0. */
export function apiRateLimit(perMinute: number): RateLimitOptions | undefined {
  if (perMinute <= 0) return undefined
  return {
    max: perMinute,
    timeWindow: MINUTE,
    // Explicit, not the plugin's default key: every throttle of ours counts the same unit.
    keyGenerator: (req) => throttleAddress(req.ip),
    errorResponseBuilder: (_req, ctx) =>
      new OAuthError('temporarily_unavailable', 'too many requests from this address, retry later', {
        status: 429,
        headers: { 'retry-after': String(Math.max(1, Math.ceil(ctx.ttl / 1000))) },
      }),
  }
}

/**
 * Route config for a page a person posts to (sign-in): the answer is an HTML page. Requests that
 * another site started (Sec-Fetch-Site) are counted apart from the address's own: a page
 * elsewhere can make its visitors' browsers flood these pages, but cannot use up their limit.
 */
export function pageRateLimit(perMinute: number): RateLimitOptions | undefined {
  if (perMinute <= 0) return undefined
  return {
    max: perMinute,
    timeWindow: MINUTE,
    keyGenerator: (req) => (fromAnotherSite(req) ? `${throttleAddress(req.ip)} another-site` : throttleAddress(req.ip)),
    errorResponseBuilder: (_req, ctx) =>
      new PageResponseError(tooManyAttemptsPage(), { 'retry-after': String(Math.max(1, Math.ceil(ctx.ttl / 1000))) }),
  }
}
