// Lists of the admin API: sorted by their key, `limit` entries from after `cursor` (the key of the
// last entry of the previous page, opaque to the caller).
import { z } from 'zod'
import { AdminProblem } from './problem.js'

export const MAX_LIMIT = 200

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).describe(`entries per page, 1 to ${MAX_LIMIT}`),
  cursor: z.string().max(400).optional().describe('nextCursor of the previous page'),
  enabled: z.enum(['true', 'false']).optional().describe('only the enabled (true) or disabled (false) ones'),
})
export type ListQuery = z.infer<typeof ListQuery>

/** The query of a list without an enabled flag (registration tokens, lockouts, consents). */
export const PageQuery = ListQuery.omit({ enabled: true })
export type PageQuery = z.infer<typeof PageQuery>

export interface Page<T> {
  items: T[]
  /** Absent on the last page. */
  nextCursor?: string
}

export function page<T>(all: T[], key: (t: T) => string, q: PageQuery): Page<T> {
  let after: string | undefined
  if (q.cursor !== undefined) {
    after = Buffer.from(q.cursor, 'base64url').toString('utf8')
    if (Buffer.from(after, 'utf8').toString('base64url') !== q.cursor) throw new AdminProblem(400, 'cursor is not one this API gave')
  }
  const sorted = all.map((t) => [key(t), t] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const rest = after === undefined ? sorted : sorted.filter(([k]) => k > after)
  const items = rest.slice(0, q.limit)
  const last = items.at(-1)
  return {
    items: items.map(([, t]) => t),
    ...(rest.length > q.limit && last ? { nextCursor: Buffer.from(last[0], 'utf8').toString('base64url') } : {}),
  }
}
