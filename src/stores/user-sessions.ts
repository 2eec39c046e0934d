// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (user-sessions.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** A sign-in session (migrations/0009_sessions.sql), as its store returns it. */
export interface StoredSession {
  /** Public session id (OIDC `sid`, logout); not a secret. */
  sid: string
  subjectId: string
  /** The user's username, read with the session (pages say who is signed in). */
  username: string
  /**
   * When the person authenticated (ms): the `auth_time` of what is issued in this session. For a
   * sign-in through an upstream provider, the upstream's auth_time, so it may precede startedAt.
   */
  authTime: number
  /** When this session began here (ms): the end of the sign-in. */
  startedAt: number
  /** How the person signed in (RFC 8176 values, e.g. ['pwd']). */
  amr: string[]
  /** Clients used in this session, in first-use order (for logout). */
  clientIds: string[]
  /** The identity provider (scheme) the person signed in through; undefined: a local sign-in. */
  idp?: string | undefined
  /** A session that began upstream: who the upstream said it was, its sid, and its ID token (the id_token_hint of the upstream sign-out). */
  upstream?: UpstreamSignIn | undefined
  /** The idle deadline (ms): the session ends then unless it is used again. */
  expiresAt: number
  /** The absolute end (ms). */
  endsAt: number
  /** The User-Agent the sign-in came with (the account page names the device by it); undefined when none was sent. */
  userAgent?: string | undefined
  /** The last time the session was used (ms): its sign-in, or the latest page that found it alive. */
  lastUsedAt: number
}

export interface UpstreamSignIn {
  sub: string
  sid: string | undefined
  idToken: string
}

export interface NewSession {
  /** The raw handle (the cookie value); the store keeps only its hash. */
  handle: string
  sid: string
  subjectId: string
  authTime: number
  amr: string[]
  idp?: string | undefined
  upstream?: UpstreamSignIn | undefined
  /** The sign-in's User-Agent, cut to USER_AGENT_MAX characters by the store. */
  userAgent?: string | undefined
  createdAt: number
  expiresAt: number
  endsAt: number
}

/** Longest User-Agent kept with a session (the header is the requester's input). */
export const USER_AGENT_MAX = 512

/**
 * Why a session ended: the person signed out (here, or of another session on the account page), a
 * new sign-in replaced it, an administrator ended it, the upstream it began at did (back-channel
 * logout), the person changed their password in another session, or removed a second factor.
 */
export type SessionEndReason = 'logout' | 'replaced' | 'admin' | 'upstream' | 'password' | 'factors'

export interface SessionEnd {
  reason: SessionEndReason
  /** ms: when (the queued logouts are due then). */
  at: number
}

/** Sign-in sessions; the handle is stored only as a hash. Each method is one statement. */
export interface UserSessionStore {
  create(s: NewSession): Promise<void>
  /**
   * The session for this handle if it is alive at `now` (before both deadlines) and its user is
   * enabled; its idle deadline moves to min(now + idleSeconds, endsAt), and its last use to `now`,
   * in the same statement.
   */
  use(handle: string, now: number, idleSeconds: number): Promise<StoredSession | undefined>
  /**
   * Deletes the session and, in the same statement, queues a back-channel logout for each client
   * used in it that has a backChannelLogoutUri; returns the session as it was (undefined when
   * there was none).
   */
  remove(handle: string, end: SessionEnd): Promise<StoredSession | undefined>
  /**
   * Ends every session of the subject (an administrator's sign-out), or every one but `exceptSid`
   * (a password change keeps the session it was made in), queuing their logouts the same way;
   * returns how many.
   */
  removeAllForSubject(subjectId: string, end: SessionEnd, exceptSid?: string): Promise<number>
  /** The subject's sessions alive at `now`, the most recently used first. */
  listForSubject(subjectId: string, now: number): Promise<StoredSession[]>
  /**
   * Ends the subject's session with this sid (the account page's sign-out of one session),
   * queuing its logouts like remove(); undefined when the subject has no such session.
   */
  removeBySid(subjectId: string, sid: string, end: SessionEnd): Promise<StoredSession | undefined>
  /**
   * Ends the sessions that began at upstream `idp` for its `sub`, and of those only the one with
   * upstream `sid` when given (Back-Channel Logout 1.0 §2.5), queuing their logouts; returns how many.
   */
  removeByUpstream(idp: string, who: { sub?: string | undefined; sid?: string | undefined }, end: SessionEnd): Promise<number>
  /** Adds the authentication methods the session's amr lacks (a step-up), in order; false when the session is gone. */
  addMethods(sid: string, methods: string[]): Promise<boolean>
  /** Adds a client to the session's list (once); false when the session is gone. */
  addClient(sid: string, clientId: string): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}
