// /admin/ciba-requests: CIBA requests as operators see them (list, one) and answered for the
// person (approve, deny), by the rule the approval page follows (src/grants/ciba-decision.ts): only
// a pending, unexpired request is decided, in one statement; the client's next poll gets the tokens
// or access_denied (OpenID CIBA Core §11). A request is named by the id of its approval URL, as
// `authz ciba` names it; its auth_req_id is the client's secret handle, stored only as a hash and
// never answered.
import { z } from 'zod'
import type { CibaRequest } from '../domain/types.js'
import { decideCibaRequest, openCibaRequest } from '../grants/ciba-decision.js'
import type { CibaListStatus } from '../stores/ciba-requests.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { ListQuery, type Page } from './paging.js'
import { AdminProblem, notFound } from './problem.js'
import { defined } from './resource.js'

const STATUSES = ['pending', 'approved', 'denied', 'expired'] as const satisfies readonly CibaListStatus[]
const key = z.string().min(1).max(200)

export const CibaListQuery = z.strictObject({
  limit: ListQuery.shape.limit,
  cursor: ListQuery.shape.cursor,
  clientId: key.optional().describe("only this client's requests"),
  subjectId: key.optional().describe('only the requests for this subject'),
  username: key.optional().describe('only the requests for this user'),
  status: z.enum(STATUSES).optional().describe('only the requests in this state (expired: pending past its expiry)'),
})
export type CibaListQuery = z.infer<typeof CibaListQuery>

const iso = z.iso.datetime()
/** A request as answered: never its auth_req_id. */
export const CibaRequestView = z.strictObject({
  requestId: z.string().describe('the id of its approval URL (/ciba/approve?request=…), as `authz ciba` shows it'),
  clientId: z.string(),
  subjectId: z.string(),
  username: z.string().optional().describe('absent when no user has the subject any more'),
  status: z.enum(STATUSES),
  requestedScopes: z.array(z.string()),
  approvedScopes: z.array(z.string()).optional(),
  resources: z.array(z.string()),
  acrValues: z.array(z.string()),
  tenant: z.string().optional(),
  idp: z.string().optional(),
  bindingMessage: z.string().optional(),
  createdAt: iso,
  expiresAt: iso,
  decidedAt: iso.optional(),
  tokensIssuedAt: iso.optional().describe('when the client redeemed the approval'),
})
export type CibaRequestView = z.infer<typeof CibaRequestView>

/** The longest request id taken from a path (ours are 32 hex characters). */
const REQUEST_ID_MAX = 100
const time = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())

/** The cursor: the last request of the page, by (createdAt, id), opaque to the caller. */
const cursorOf = (r: CibaRequest) => Buffer.from(`${r.createdAt}:${r.id}`, 'utf8').toString('base64url')
function afterCursor(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  if (cursor === undefined) return undefined
  const m = /^(\d{1,15}):([\x21-\x7e]{1,100})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m) throw new AdminProblem(400, 'cursor is not one this API gave')
  return { createdAt: Number(m[1]), id: m[2]! }
}

export function createCibaAdmin(deps: AdminDeps) {
  const { clock } = deps
  const requests = deps.cibaRequests

  async function view(r: CibaRequest, usernames?: Map<string, string | undefined>): Promise<CibaRequestView> {
    const username = usernames?.has(r.subjectId)
      ? usernames.get(r.subjectId)
      : (await deps.read.users.findBySubjectId(r.subjectId))?.username
    const expired = r.status === 'pending' && r.expiresAt <= clock.now()
    return defined({
      requestId: r.id,
      clientId: r.clientId,
      subjectId: r.subjectId,
      username,
      status: expired ? 'expired' : r.status,
      requestedScopes: r.requestedScopes,
      approvedScopes: r.approvedScopes,
      resources: r.resources,
      acrValues: r.acrValues,
      tenant: r.tenant,
      idp: r.idp,
      bindingMessage: r.bindingMessage,
      createdAt: time(r.createdAt),
      expiresAt: time(r.expiresAt),
      decidedAt: time(r.decidedAt),
      tokensIssuedAt: time(r.consumedAt),
    }) as CibaRequestView
  }

  async function find(requestId: string): Promise<CibaRequest> {
    const r = requestId.length <= REQUEST_ID_MAX ? await requests.findById(requestId) : undefined
    if (!r) throw notFound('CIBA request')
    return r
  }

  return {
    async list(q: CibaListQuery): Promise<Page<CibaRequestView>> {
      let subjectId = q.subjectId
      if (q.username !== undefined) {
        const user = await deps.read.users.findByUsername(q.username)
        if (!user || (subjectId !== undefined && subjectId !== user.subjectId)) return { items: [] }
        subjectId = user.subjectId
      }
      const filter = { clientId: q.clientId, subjectId, status: q.status, after: afterCursor(q.cursor) }
      // One more than a page: whether there is a next one.
      const found = await requests.list(filter, clock.now(), q.limit + 1)
      const items = found.slice(0, q.limit)
      const usernames = new Map<string, string | undefined>()
      for (const s of new Set(items.map((r) => r.subjectId))) usernames.set(s, (await deps.read.users.findBySubjectId(s))?.username)
      const last = items.at(-1)
      return {
        items: await Promise.all(items.map((r) => view(r, usernames))),
        ...(found.length > q.limit && last ? { nextCursor: cursorOf(last) } : {}),
      }
    },

    async get(requestId: string): Promise<CibaRequestView> {
      return view(await find(requestId))
    },

    /**
     * Approves (every scope the request asked for, auth_time now, as `authz ciba approve`) or
     * denies; 409 when the request has expired or was decided already.
     */
    async decide(
      requestId: string,
      decision: 'approve' | 'deny',
      caller: AdminCaller,
      ctx: { address: string; requestId: string },
    ): Promise<CibaRequestView> {
      const opened =
        requestId.length <= REQUEST_ID_MAX ? await openCibaRequest({ clock, requests }, requestId) : { kind: 'unknown' as const }
      const done =
        'id' in opened
          ? await decideCibaRequest({ clock, requests, audit: deps.audit }, opened, decision, { signIn: { authTime: clock.now() }, ...ctx })
          : opened
      if (done.kind === 'unknown') throw notFound('CIBA request')
      if (done.kind === 'expired') throw new AdminProblem(409, 'the CIBA request has expired')
      if (done.kind === 'decided') throw new AdminProblem(409, `the CIBA request was already ${done.status}`)
      deps.audit.emit({
        event: 'admin.changed',
        clientId: caller.clientId,
        resource: `ciba-requests/${requestId}`,
        action: decision,
        changes: ['status'],
      })
      return view(done.request)
    },
  }
}
