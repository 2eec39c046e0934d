// Logout of a session that began upstream, both ways.
//
// Ours to theirs (OpenID Connect RP-Initiated Logout 1.0 §2): when such a session ends here, the
// browser goes on to the upstream's end_session_endpoint with the id_token_hint it gave us and
// our signout-callback as post_logout_redirect_uri; the callback sends it where our own logout was
// going. Where that is travels in `state`, MACed with a server secret, so the callback is no open
// redirect. An upstream without end_session_endpoint, or one that cannot be reached, is skipped.
//
// Theirs to ours (OpenID Connect Back-Channel Logout 1.0 §2.6): the upstream POSTs a logout token;
// it is validated fully (signature from the upstream's JWKS, iss, aud, iat, exp, jti once, the
// event, sub or sid, no nonce), then the sessions it started here end, which queues our own
// back-channel logouts to the apps (src/stores/user-sessions.postgres.ts).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload } from 'jose'
import * as oidc from 'openid-client'
import type { Clock } from '../../domain/clock.js'
import { FEDERATION_SIGNOUT_CALLBACK_PATH, federationPath } from '../../endpoints.js'
import type { Session } from '../../interaction/session.js'
import type { AuditSink } from '../../observe/audit.js'
import type { IdentityProviderStore } from '../../stores/identity-providers.js'
import type { UsedJtiStore } from '../../stores/used-jtis.js'
import type { UserSessionStore } from '../../stores/user-sessions.js'
import type { UpstreamOptions, Upstreams } from './upstream.js'

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** Seconds a logout token's jti is remembered when it carries no exp (Back-Channel Logout 1.0 §2.4 requires exp). */
const JTI_MEMORY = 600

export interface FederationLogoutDeps {
  issuer: string
  clock: Clock
  providers: IdentityProviderStore
  upstreams: Upstreams
  sessions: Pick<UserSessionStore, 'removeByUpstream'>
  usedJtis: UsedJtiStore
  audit: AuditSink
  options: UpstreamOptions
  /** 32 bytes: MACs where the signout-callback goes next. */
  secret: Buffer
}

export function createFederationLogout(deps: FederationLogoutDeps) {
  const { clock } = deps
  const mac = (next: string) => createHmac('sha256', deps.secret).update(`federation sign-out v1\n${next}`).digest()
  const jwks = new Map<string, { uri: string; set: ReturnType<typeof createRemoteJWKSet> }>()

  const { fetch } = deps.options
  function keysOf(scheme: string, uri: string) {
    const hit = jwks.get(scheme)
    if (hit?.uri === uri) return hit.set
    const set = createRemoteJWKSet(new URL(uri), {
      timeoutDuration: deps.options.timeoutSeconds * 1000,
      ...(fetch ? { [customFetch]: (url: string, o: { headers: Headers; signal: AbortSignal }) => fetch(url, getOptions(o)) } : {}),
    })
    jwks.set(scheme, { uri, set })
    return set
  }

  return {
    /** Where to send the browser to sign out upstream, coming back to `next` (a local path or a validated URI); undefined: nowhere. */
    async signOutUrl(session: Session, next: string): Promise<string | undefined> {
      if (!session.idp || !session.upstream) return undefined
      const p = await deps.providers.findByScheme(session.idp)
      const config = p && (await deps.upstreams.configuration(p).catch(() => undefined))
      if (!config?.serverMetadata().end_session_endpoint) return undefined
      const state = `${Buffer.from(next).toString('base64url')}.${mac(next).toString('base64url')}`
      return oidc.buildEndSessionUrl(config, {
        id_token_hint: session.upstream.idToken,
        post_logout_redirect_uri: `${deps.issuer}${federationPath(FEDERATION_SIGNOUT_CALLBACK_PATH, session.idp)}`,
        state,
      }).href
    },

    /** The origin of the upstream's end_session_endpoint (a form whose answer goes there must allow it in its CSP). */
    async signOutOrigin(session: Session | undefined): Promise<string | undefined> {
      if (!session?.idp || !session.upstream) return undefined
      const p = await deps.providers.findByScheme(session.idp)
      const config = p && (await deps.upstreams.configuration(p).catch(() => undefined))
      const endpoint = config?.serverMetadata().end_session_endpoint
      return endpoint ? new URL(endpoint).origin : undefined
    },

    /** The signout-callback's state: where to go next, if we wrote it. */
    continuation(state: string | undefined): string | undefined {
      const [data, given] = (state ?? '').split('.')
      if (!data || !given) return undefined
      const next = Buffer.from(data, 'base64url').toString()
      const presented = Buffer.from(given, 'base64url')
      const expected = mac(next)
      return presented.length === expected.length && timingSafeEqual(presented, expected) ? next : undefined
    },

    /** POST /federation/{scheme}/backchannel-logout: true when the token was valid (its sessions have ended). */
    async backchannelLogout(scheme: string, logoutToken: string | undefined): Promise<boolean> {
      const p = await deps.providers.findByScheme(scheme)
      if (!p?.enabled || !logoutToken) return false
      const config = await deps.upstreams.configuration(p).catch(() => undefined)
      const meta = config?.serverMetadata()
      if (!meta?.jwks_uri) return false
      let claims: JWTPayload
      try {
        ;({ payload: claims } = await jwtVerify(logoutToken, keysOf(scheme, meta.jwks_uri), {
          issuer: meta.issuer,
          audience: p.clientId,
          requiredClaims: ['iat', 'jti', 'events'],
          currentDate: new Date(clock.now()),
          clockTolerance: 60,
          typ: undefined,
        }))
      } catch {
        return false
      }
      if (!validLogoutClaims(claims)) return false
      const now = clock.now()
      const until = typeof claims.exp === 'number' ? claims.exp * 1000 : now + JTI_MEMORY * 1000
      if (!(await deps.usedJtis.use(`federation:${scheme}`, claims.jti!, until, now))) return false
      const sid = typeof claims.sid === 'string' ? claims.sid : undefined
      const sub = typeof claims.sub === 'string' ? claims.sub : undefined
      const ended = await deps.sessions.removeByUpstream(scheme, { sub, sid }, { reason: 'upstream', at: now })
      deps.audit.emit({ event: 'federation.logout', idp: scheme, sessions: ended, ...(sid ? { sid } : {}) })
      return true
    },
  }
}

export type FederationLogout = ReturnType<typeof createFederationLogout>

/** jose's JWKS request in the form of openid-client's fetch (one injected fetch for both). */
function getOptions(o: { headers: Headers; signal: AbortSignal }) {
  const headers: Record<string, string> = {}
  o.headers.forEach((v, k) => (headers[k] = v))
  return { method: 'GET', body: undefined, headers, redirect: 'manual' as const, signal: o.signal }
}

/** Back-Channel Logout 1.0 §2.4: the logout event, sub or sid, and never a nonce (it is no ID token). */
function validLogoutClaims(c: JWTPayload): boolean {
  const events = c.events as Record<string, unknown> | undefined
  const event = events && typeof events === 'object' ? events[LOGOUT_EVENT] : undefined
  if (!event || typeof event !== 'object' || Array.isArray(event)) return false
  if (typeof c.sub !== 'string' && typeof c.sid !== 'string') return false
  return !('nonce' in c) && typeof c.jti === 'string'
}
