// The one sign-in session of the whole server, shared by every interactive flow (CIBA approval
// now; the authorization endpoint, the device page and logout next). The browser holds a random
// 256-bit handle; the server keeps its hash, the user, auth_time (the time of the sign-in, which
// is what tokens carry: OIDC Core §2 auth_time), amr (RFC 8176) and the clients used in the
// session (for logout). No Fastify types: cookies are the route helper's (src/http/page-kit.ts).
//
// Lifetimes: a session ends SESSION_IDLE_TIMEOUT after its last use and SESSION_LIFETIME after
// sign-in at the latest, whichever comes first. Ending a session (sign-out, RP-initiated logout,
// or its replacement by a new sign-in) queues a back-channel logout for each client used in it
// (OpenID Connect Back-Channel Logout 1.0, src/flows/logout/backchannel-logout.ts). A session that
// merely expires does not: an idle deadline passing here says nothing about the person's use of
// the apps, which keep their own sessions. Every sign-in starts a new session with a new
// handle and ends the one the browser had (no session fixation: a handle planted before sign-in
// is never the one that is signed in).
import { randomBytes } from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import { USER_AGENT_MAX, type StoredSession, type UpstreamSignIn, type UserSessionStore } from '../stores/user-sessions.js'
import { newHandle } from '../tokens/handles.js'

export type Session = StoredSession

export interface SessionDeps {
  clock: Clock
  store: UserSessionStore
  /** Seconds (SESSION_IDLE_TIMEOUT, SESSION_LIFETIME). */
  idleSeconds: number
  lifetimeSeconds: number
}

export interface SessionService {
  /** The live session for this handle (its idle deadline moves forward), or undefined. */
  use(handle: string | undefined): Promise<Session | undefined>
  /**
   * Starts a session for a person who has just authenticated, ending `previousHandle`'s session
   * if there is one. Returns the new handle (for the cookie) and the session.
   */
  start(
    previousHandle: string | undefined,
    who: {
      subjectId: string
      username: string
      amr: string[]
      /** ms: when the person authenticated, if before now (an upstream provider's auth_time); never later than now. */
      authTime?: number | undefined
      idp?: string | undefined
      upstream?: UpstreamSignIn | undefined
      /** The sign-in request's User-Agent: how the account page names the device. */
      userAgent?: string | undefined
    },
  ): Promise<{ handle: string; session: Session }>
  /** Ends the session; returns it as it was (its clientIds say whom logout concerns). */
  end(handle: string | undefined): Promise<Session | undefined>
  /** The person's live sessions, the most recently used first (the account page). */
  list(subjectId: string): Promise<Session[]>
  /** Ends one of the person's sessions by its sid (queuing its back-channel logouts); undefined when they have none with it. */
  endBySid(subjectId: string, sid: string): Promise<Session | undefined>
  /** Ends every session of the person but `keep` (a password change), queuing their logouts; returns how many. */
  endOthers(keep: Pick<Session, 'subjectId' | 'sid'>, reason: 'logout' | 'password' | 'factors'): Promise<number>
  /**
   * A step-up in this session (a second factor after the password): `methods` join its amr, and
   * the session object given is updated too. Other sessions of the person stay as they were.
   */
  addMethods(session: Session, methods: string[]): Promise<boolean>
  /**
   * Records that a client was used in the session (once), for logout. The authorization endpoint
   * calls it: its tokens belong to this browser's session and its ID tokens carry the sid. The
   * device flow and CIBA do not: their tokens go to another device, whose session this browser's
   * sign-out does not end, and their ID tokens carry no sid.
   */
  addClient(session: Pick<Session, 'sid'>, clientId: string): Promise<void>
}

/** What a flow may demand of an existing session (OIDC Core §3.1.2.1 max_age and prompt=login). */
export interface Freshness {
  /** Seconds: the sign-in must be at most this old (max_age; 0 means a sign-in now). */
  maxAge?: number | undefined
  /** ms: the sign-in must have happened at or after this moment (prompt=login: the request's arrival). */
  signedInAfter?: number | undefined
}

/** Whether the session is recent enough for the flow; false without a session. */
export function sessionSatisfies(session: Session | undefined, need: Freshness, now: number): session is Session {
  if (!session) return false
  if (need.signedInAfter !== undefined && session.authTime < need.signedInAfter) return false
  // max_age counts whole seconds, as auth_time does in tokens.
  if (need.maxAge !== undefined && Math.floor(now / 1000) - Math.floor(session.authTime / 1000) > need.maxAge) return false
  return true
}

export function createSessionService(deps: SessionDeps): SessionService {
  const { clock, store } = deps
  return {
    async use(handle) {
      return handle ? store.use(handle, clock.now(), deps.idleSeconds) : undefined
    },
    async start(previousHandle, who) {
      const now = clock.now()
      // The replaced session ends like any other: its clients get back-channel logouts.
      if (previousHandle) await store.remove(previousHandle, { reason: 'replaced', at: now })
      const handle = newHandle()
      const endsAt = now + deps.lifetimeSeconds * 1000
      const session: Session = {
        sid: randomBytes(16).toString('base64url'),
        subjectId: who.subjectId,
        username: who.username,
        authTime: Math.min(now, who.authTime ?? now),
        startedAt: now,
        amr: who.amr,
        clientIds: [],
        ...(who.idp !== undefined ? { idp: who.idp } : {}),
        ...(who.upstream !== undefined ? { upstream: who.upstream } : {}),
        expiresAt: Math.min(endsAt, now + deps.idleSeconds * 1000),
        endsAt,
        ...(who.userAgent ? { userAgent: who.userAgent.slice(0, USER_AGENT_MAX) } : {}),
        lastUsedAt: now,
      }
      await store.create({ handle, createdAt: now, ...session })
      return { handle, session }
    },
    async end(handle) {
      return handle ? store.remove(handle, { reason: 'logout', at: clock.now() }) : undefined
    },
    list: (subjectId) => store.listForSubject(subjectId, clock.now()),
    endBySid: (subjectId, sid) => store.removeBySid(subjectId, sid, { reason: 'logout', at: clock.now() }),
    endOthers: (keep, reason) => store.removeAllForSubject(keep.subjectId, { reason, at: clock.now() }, keep.sid),
    async addMethods(session, methods) {
      if (!(await store.addMethods(session.sid, methods))) return false
      for (const m of methods) if (!session.amr.includes(m)) session.amr = [...session.amr, m]
      return true
    },
    async addClient(session, clientId) {
      await store.addClient(session.sid, clientId)
    },
  }
}
