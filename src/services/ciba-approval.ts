// The user's side of CIBA (Core §7.2 leaves authentication and consent to the OP): sign-in with
// username and password, a session kept hashed in user_sessions, CSRF tokens on every form, and
// the approve / deny decision, which is one SQL statement valid only while the request is pending
// and unexpired. Returns page models; rendering lives in src/pages, HTTP in src/routes.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import type { CibaRequest } from '../domain/types.js'
import type { CibaRequestStore, ClientStore, ResourceStore, UserSessionStore, UserStore } from '../stores/types.js'
import { newHandle } from '../tokens/handles.js'
import type { PasswordCheck } from './password-check.js'

export const DEFAULT_SESSION_LIFETIME = 900

export interface RequestDetails {
  requestId: string
  clientName: string
  scopes: Array<{ name: string; displayName: string }>
  bindingMessage: string | undefined
  idp: string | undefined
  tenant: string | undefined
  expiresAt: number
}

export type ApprovalPage =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'decided'; status: 'approved' | 'denied' }
  | { kind: 'sign-in'; requestId: string; csrf: string; error?: 'bad-credentials' | 'wrong-user' | 'csrf' | 'signed-out' }
  | { kind: 'consent'; details: RequestDetails; username: string; csrf: string; error?: 'csrf' }
  | { kind: 'done'; status: 'approved' | 'denied'; clientName: string }

export interface ApprovalCookies {
  session?: string | undefined
  /** Pre-session CSRF cookie for the sign-in form (double submit). */
  csrf?: string | undefined
}

export interface ApprovalResult {
  page: ApprovalPage
  /** Cookie values to set (undefined: leave as is). */
  setSession?: { value: string; maxAge: number }
  setCsrf?: string
  /** After a successful sign-in: show the request (303 to GET). */
  redirect?: boolean
}

export interface CibaApprovalDeps {
  clock: Clock
  requests: CibaRequestStore
  sessions: UserSessionStore
  users: Pick<UserStore, 'findByUsername' | 'findBySubjectId'>
  clients: Pick<ClientStore, 'findById'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  /** The one password check: lockout and failure logs. */
  passwordCheck: PasswordCheck
  sessionLifetime?: number
}

/** The CSRF token that belongs to a cookie value: only someone who can read the cookie knows it. */
export function csrfToken(cookieValue: string): string {
  return createHash('sha256').update(`csrf:${cookieValue}`).digest('base64url')
}

export function csrfMatches(cookieValue: string | undefined, presented: string | undefined): boolean {
  if (cookieValue === undefined || presented === undefined) return false
  const a = Buffer.from(csrfToken(cookieValue))
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}

export function createCibaApproval(deps: CibaApprovalDeps) {
  const { clock } = deps
  const lifetime = deps.sessionLifetime ?? DEFAULT_SESSION_LIFETIME

  /** The request if it can still be decided, else the page that says why not. */
  async function open(requestId: string | undefined): Promise<CibaRequest | ApprovalPage> {
    const req = requestId ? await deps.requests.findById(requestId) : undefined
    if (!req) return { kind: 'unknown' }
    if (req.status !== 'pending') return { kind: 'decided', status: req.status }
    if (req.expiresAt <= clock.now()) return { kind: 'expired' }
    return req
  }

  function signInPage(requestId: string, cookies: ApprovalCookies, error?: 'bad-credentials' | 'wrong-user' | 'csrf' | 'signed-out'): ApprovalResult {
    const pre = cookies.csrf ?? newHandle()
    return { page: { kind: 'sign-in', requestId, csrf: csrfToken(pre), ...(error ? { error } : {}) }, ...(cookies.csrf ? {} : { setCsrf: pre }) }
  }

  async function details(req: CibaRequest): Promise<RequestDetails> {
    const [client, cat] = await Promise.all([deps.clients.findById(req.clientId), deps.resources.loadCatalogue()])
    const scopes = req.requestedScopes.map((name) => ({
      name,
      displayName: cat.identityResources.get(name)?.displayName ?? cat.apiScopes.get(name)?.displayName ?? name,
    }))
    return {
      requestId: req.id, clientName: client?.clientName ?? req.clientId, scopes, bindingMessage: req.bindingMessage,
      idp: req.idp, tenant: req.tenant, expiresAt: req.expiresAt,
    }
  }

  async function session(cookies: ApprovalCookies) {
    return cookies.session ? deps.sessions.find(cookies.session, clock.now()) : undefined
  }

  return {
    async show(requestId: string | undefined, cookies: ApprovalCookies): Promise<ApprovalResult> {
      const req = await open(requestId)
      if (!('id' in req)) return { page: req }
      const s = await session(cookies)
      if (!s) return signInPage(req.id, cookies)
      if (s.subjectId !== req.subjectId) return signInPage(req.id, cookies, 'wrong-user')
      const user = await deps.users.findBySubjectId(s.subjectId)
      return { page: { kind: 'consent', details: await details(req), username: user?.username ?? s.subjectId, csrf: csrfToken(cookies.session!) } }
    },

    async signIn(requestId: string | undefined, form: Record<string, string>, cookies: ApprovalCookies, address: string): Promise<ApprovalResult> {
      const req = await open(requestId)
      if (!('id' in req)) return { page: req }
      if (!csrfMatches(cookies.csrf, form.csrf)) return signInPage(req.id, {}, 'csrf')
      // One message for every failure (unknown user, wrong password, disabled, locked).
      const checked = await deps.passwordCheck.check(form.username ?? '', form.password ?? '', { address, clientId: req.clientId })
      if (!checked.ok) return signInPage(req.id, cookies, 'bad-credentials')
      const user = checked.user
      // The request stays pending: the right user can still sign in and decide.
      if (user.subjectId !== req.subjectId) return signInPage(req.id, cookies, 'wrong-user')
      const sessionId = newHandle()
      const now = clock.now()
      await deps.sessions.create({ sessionId, subjectId: user.subjectId, authTime: now, createdAt: now, expiresAt: now + lifetime * 1000 })
      return { page: { kind: 'sign-in', requestId: req.id, csrf: '' }, setSession: { value: sessionId, maxAge: lifetime }, redirect: true }
    },

    async decide(requestId: string | undefined, form: Record<string, string>, cookies: ApprovalCookies): Promise<ApprovalResult> {
      const req = await open(requestId)
      if (!('id' in req)) return { page: req }
      const s = await session(cookies)
      if (!s) return signInPage(req.id, cookies, 'signed-out')
      if (s.subjectId !== req.subjectId) return signInPage(req.id, cookies, 'wrong-user')
      if (!csrfMatches(cookies.session, form.csrf)) {
        const user = await deps.users.findBySubjectId(s.subjectId)
        return { page: { kind: 'consent', details: await details(req), username: user?.username ?? s.subjectId, csrf: csrfToken(cookies.session!), error: 'csrf' } }
      }
      // The approval is the user's authentication act for this request: its time is auth_time.
      const now = clock.now()
      const decided = await deps.requests.decide(
        req.id,
        form.decision === 'approve' ? { status: 'approved', approvedScopes: req.requestedScopes, authTime: now } : { status: 'denied' },
        now,
      )
      // Lost a race with another decision or with expiry: say what the request's state is now.
      if (!decided) return { page: (await open(req.id)) as ApprovalPage }
      const { clientName } = await details(decided)
      return { page: { kind: 'done', status: decided.status as 'approved' | 'denied', clientName } }
    },

    async signOut(cookies: ApprovalCookies): Promise<void> {
      if (cookies.session) await deps.sessions.remove(cookies.session)
    },
  }
}

export type CibaApproval = ReturnType<typeof createCibaApproval>
