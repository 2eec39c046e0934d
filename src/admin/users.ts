// /admin/users: users in the seed file's shape (src/seed/schema.ts SeedUser). The password and the
// CIBA user code are write-only (an answer never carries them or their hashes); `subjectId` may be
// left out, keeping the user's or making a new one, and never changes (OpenID Connect Core §2).
// Actions as the CLI has them: disable (ending the user's sessions), enable, unlock, sign-out;
// and the upstream identities a user is linked to (read only: links are made by signing in).
import { randomUUID } from 'node:crypto'
import type { User } from '../domain/types.js'
import { SeedUser } from '../seed/schema.js'
import type { AdminCaller, AdminDeps, AdminStores } from './deps.js'
import { checkPreconditions, createEtagOf, type Preconditions } from './etag.js'
import { page, type ListQuery, type PageQuery } from './paging.js'
import { notFound } from './problem.js'
import { applying, changedFields, checkShape, withKey } from './resource.js'
import type { Written } from './clients.js'

export const userView = (u: User): Record<string, unknown> => ({
  subjectId: u.subjectId,
  username: u.username,
  enabled: u.enabled,
  claims: u.claims,
  requireMfa: u.requireMfa ?? false,
})
const hidden = (u: User | undefined) => (u ? [u.passwordHash ?? null, u.cibaUserCodeHash ?? null] : null)

export type UserAction = 'disable' | 'enable' | 'unlock' | 'sign-out'

export function createUserAdmin(deps: AdminDeps) {
  const etagOf = createEtagOf(deps.etagKey)
  const tagOf = (u: User) => etagOf(userView(u), hidden(u))
  const audit = (caller: AdminCaller, username: string, action: string, changes: string[]) =>
    deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource: `users/${username}`, action, changes })
  /** Ends every session of the subject, queuing the back-channel logouts of the apps used in them (as the CLI does). */
  const endSessions = (s: AdminStores, subjectId: string) =>
    s.sessions.removeAllForSubject(subjectId, { reason: 'admin', at: deps.clock.now() })

  return {
    async list(q: ListQuery) {
      const all = (await deps.read.users.list()).filter((u) => q.enabled === undefined || String(u.enabled) === q.enabled)
      const p = page(all, (u) => u.username, q)
      return { ...p, items: p.items.map(userView) }
    },

    /** The password lockouts in force (at most 10,000), by subject, a page at a time: what `authz users list` shows beside each user. */
    async lockouts(q: PageQuery) {
      const blocked = await deps.read.failures.listBlocked('user', deps.clock.now(), 10_000)
      const p = page(blocked, (b) => b.name, q)
      return { ...p, items: p.items.map((b) => ({ subjectId: b.name, lockedUntil: new Date(b.blockedUntil).toISOString() })) }
    },

    async get(username: string) {
      const u = await deps.read.users.findByUsername(username)
      if (!u) throw notFound('user')
      return { body: userView(u), etag: tagOf(u) }
    },

    async put(username: string, body: unknown, pre: Preconditions, caller: AdminCaller): Promise<Written> {
      const keyed = withKey(body, 'username', username)
      return deps.write(async (w) => {
        const before = await w.users.findByUsername(username)
        const input =
          typeof keyed === 'object' && keyed !== null && !Array.isArray(keyed) && !('subjectId' in keyed)
            ? { ...keyed, subjectId: before?.subjectId ?? randomUUID() }
            : keyed
        checkShape(SeedUser, input)
        checkPreconditions(pre, before && tagOf(before))
        await applying('users[0]', () => w.applySeed({ users: [input] }))
        const after = (await w.users.findByUsername(username))!
        const changes = changedFields(before && userView(before), userView(after), [hidden(before), hidden(after)], 'password')
        if (!before || changes.length > 0) audit(caller, username, before ? 'replace' : 'create', changes)
        if (before?.enabled && !after.enabled) await endSessions(w, after.subjectId)
        return { status: before ? 200 : 201, body: userView(after), etag: tagOf(after) }
      })
    },

    async remove(username: string, pre: Preconditions, caller: AdminCaller): Promise<void> {
      await deps.write(async (w) => {
        const before = await w.users.findByUsername(username)
        if (!before) throw notFound('user')
        checkPreconditions(pre, tagOf(before))
        await endSessions(w, before.subjectId) // before the sessions go with the user, so that the apps are told
        await w.users.remove(username)
        await w.failures.clearName(['user', 'user_code'], before.subjectId)
        audit(caller, username, 'delete', [])
      })
    },

    /** The upstream identities the user is linked to (federation), oldest first: `authz users links`. */
    async links(username: string) {
      const u = await deps.read.users.findByUsername(username)
      if (!u) throw notFound('user')
      const iso = (ms: number) => new Date(ms).toISOString()
      const all = await deps.read.federatedIdentities.listForSubject(u.subjectId)
      return {
        items: all.map((l) => ({
          scheme: l.scheme,
          upstreamSub: l.upstreamSub,
          linkedAt: iso(l.createdAt),
          lastSignInAt: iso(l.lastSignInAt),
        })),
      }
    },

    /** Answers the user as it is after the action, and what the action did. */
    async act(username: string, action: UserAction, pre: Preconditions, caller: AdminCaller) {
      return deps.write(async (w) => {
        const user = await w.users.findByUsername(username)
        if (!user) throw notFound('user')
        checkPreconditions(pre, tagOf(user))
        let result: Record<string, number> = {}
        if (action === 'disable' || action === 'enable') {
          await w.users.setEnabled(username, action === 'enable')
          if (action === 'disable') result = { sessionsEnded: await endSessions(w, user.subjectId) }
          audit(caller, username, action, user.enabled === (action === 'enable') ? [] : ['enabled'])
        } else if (action === 'unlock') {
          result = { failuresCleared: await w.failures.clearName(['user', 'user_code'], user.subjectId) }
          audit(caller, username, action, [])
        } else {
          result = { sessionsEnded: await endSessions(w, user.subjectId) }
          audit(caller, username, action, [])
        }
        const after = (await w.users.findByUsername(username))!
        return { body: { ...userView(after), ...result }, etag: tagOf(after) }
      })
    },
  }
}

export type UserAdmin = ReturnType<typeof createUserAdmin>
