// What the admin resources share: the seed file's shape checked before anything is read, a
// seed problem turned into a problem detail with its JSON path in the request body, the names of
// the fields a write changed (for the audit event), and the key of the path written into the body.
import type { z } from 'zod'
import { SeedError } from '../seed/errors.js'
import { jsonPath } from '../seed/errors.js'
import { invalid, problemEntry } from './problem.js'

/** The body with the path's key filled in; 400 when the body names another. */
export function withKey(body: unknown, field: string, key: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const named = (body as Record<string, unknown>)[field]
  if (named !== undefined && named !== key) throw invalid([{ path: field, detail: `must be the ${field} of the path, or left out` }])
  return { ...body, [field]: key }
}

/** Checks `body` with the seed file's schema for this kind of entry; 400 listing every problem. */
export function checkShape(schema: z.ZodType, body: unknown): void {
  const parsed = schema.safeParse(body)
  if (!parsed.success) throw invalid(parsed.error.issues.map((i) => ({ path: jsonPath(i.path), detail: i.message })))
}

/** Runs a seed apply; its problems (against what is stored) as a 400 with paths in the body. */
export async function applying(prefix: string, apply: () => Promise<void>): Promise<void> {
  try {
    await apply()
  } catch (err) {
    if (err instanceof SeedError) throw invalid(err.problems.map((p) => problemEntry(p, prefix)))
    throw err
  }
}

/** The top-level fields whose value differs, and `hiddenName` when what the view leaves out does. */
export function changedFields(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown>,
  hidden: [unknown, unknown],
  hiddenName: string,
): string[] {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after)])].sort()
  const changed = keys.filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after[k]))
  if (JSON.stringify(hidden[0]) !== JSON.stringify(hidden[1])) changed.push(hiddenName)
  return changed
}

/** Leaves out undefined members, so that what GET answers is a seed entry PUT takes back. */
export const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
