// /admin/registration-tokens: the initial access tokens that REGISTRATION=token requires of a
// registration (RFC 7591 §3), as `authz registration-tokens` has them. A token is answered once,
// when it is made, and stored only as its SHA-256; a list or a revocation never carries it.
import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import type { InitialAccessToken } from '../stores/client-registrations.js'
import { newHandle } from '../tokens/handles.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { page, type Page, type PageQuery } from './paging.js'
import { AdminProblem, notFound } from './problem.js'

const DAY = 86_400
export const REGISTRATION_TOKEN_DEFAULT_LIFETIME = 7 * DAY
export const REGISTRATION_TOKEN_MAX_LIFETIME = 365 * DAY
export const REGISTRATION_TOKEN_MAX_USES = 1_000_000

export const NewRegistrationToken = z.strictObject({
  expiresIn: z
    .number()
    .int()
    .min(1)
    .max(REGISTRATION_TOKEN_MAX_LIFETIME)
    .default(REGISTRATION_TOKEN_DEFAULT_LIFETIME)
    .describe(`how long the token works, in seconds (default ${REGISTRATION_TOKEN_DEFAULT_LIFETIME}: 7 days)`),
  maxUses: z
    .number()
    .int()
    .min(1)
    .max(REGISTRATION_TOKEN_MAX_USES)
    .optional()
    .describe('how many clients it may register (absent: any number until it expires)'),
  description: z
    .string()
    .max(200)
    .regex(/^\P{Cc}*$/u, 'must not contain control characters')
    .optional()
    .describe('a note for the list (who it was given to)'),
})
export type NewRegistrationToken = z.infer<typeof NewRegistrationToken>

const STATES = ['usable', 'expired', 'used up', 'revoked'] as const
const iso = z.iso.datetime()
/** A token as answered: never the token itself, but when it is made. */
export const RegistrationTokenView = z.strictObject({
  id: z.string().describe('names the token in a revocation; not the token'),
  state: z.enum(STATES),
  description: z.string().optional(),
  createdAt: iso,
  expiresAt: iso,
  uses: z.number().int().describe('the clients it has registered'),
  maxUses: z.number().int().optional().describe('absent: any number until it expires'),
  revokedAt: iso.optional(),
})
export type RegistrationTokenView = z.infer<typeof RegistrationTokenView>

export const CreatedRegistrationToken = RegistrationTokenView.extend({
  token: z.string().describe('send as "Authorization: Bearer TOKEN" to the registration endpoint: the only time it is shown'),
})

/** Whether the token may register now, by the rule the registration endpoint applies. */
export function tokenState(t: InitialAccessToken, now: number): (typeof STATES)[number] {
  if (t.revokedAt !== undefined) return 'revoked'
  if (t.expiresAt <= now) return 'expired'
  return t.maxUses !== undefined && t.uses >= t.maxUses ? 'used up' : 'usable'
}

const time = (ms: number) => new Date(ms).toISOString()

function view(t: InitialAccessToken, now: number): RegistrationTokenView {
  return {
    id: t.id,
    state: tokenState(t, now),
    ...(t.description !== undefined ? { description: t.description } : {}),
    createdAt: time(t.createdAt),
    expiresAt: time(t.expiresAt),
    uses: t.uses,
    ...(t.maxUses !== undefined ? { maxUses: t.maxUses } : {}),
    ...(t.revokedAt !== undefined ? { revokedAt: time(t.revokedAt) } : {}),
  }
}

/** The longest token id taken from a path (ours are 12 hex characters). */
const ID_MAX = 100

export function createRegistrationTokenAdmin(deps: AdminDeps) {
  const { clock } = deps
  const tokens = deps.registrationTokens
  const audit = (caller: AdminCaller, id: string, action: string) =>
    deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource: `registration-tokens/${id}`, action, changes: [] })
  const find = async (id: string) => (id.length <= ID_MAX ? (await tokens.list()).find((t) => t.id === id) : undefined)

  return {
    /** The tokens, oldest first, a page at a time. */
    async list(q: PageQuery): Promise<Page<RegistrationTokenView>> {
      const now = clock.now()
      const p = page(await tokens.list(), (t) => `${time(t.createdAt)} ${t.id}`, q)
      return { ...p, items: p.items.map((t) => view(t, now)) }
    },

    async create(input: NewRegistrationToken, caller: AdminCaller) {
      const id = randomBytes(6).toString('hex')
      const token = newHandle()
      const now = clock.now()
      await tokens.create({
        id,
        token,
        createdAt: now,
        expiresAt: now + input.expiresIn * 1000,
        ...(input.maxUses !== undefined ? { maxUses: input.maxUses } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
      })
      audit(caller, id, 'create')
      const created = (await find(id))!
      return { ...view(created, now), token }
    },

    /** Stops the token from registering more clients (those it registered stay); 409 when it was revoked already. */
    async revoke(id: string, caller: AdminCaller): Promise<RegistrationTokenView> {
      const before = await find(id)
      if (!before) throw notFound('registration token')
      if (!(await tokens.revoke(id, clock.now()))) throw new AdminProblem(409, 'the registration token was revoked already')
      audit(caller, id, 'revoke')
      return view((await find(id))!, clock.now())
    },
  }
}
