// Entity tags (RFC 9110 §8.8.3) and the conditional requests of writes (§13.1.1 If-Match,
// §13.1.2 If-None-Match), so that two operators cannot silently overwrite each other: a write that
// names the version it read fails with 412 when someone changed the resource since.
import { createHmac } from 'node:crypto'
import { AdminProblem } from './problem.js'

/** A resource's tag from its representation and from what it leaves out (hidden). */
export type EtagOf = (view: unknown, hidden?: unknown) => string

/**
 * Strong tags of the representation and of what it leaves out (secret and password hashes, an
 * upstream client secret), so that a rotated secret changes the tag too. An HMAC-SHA-256 keyed with
 * the server secret 'admin-etag' (src/keys/server-secrets.ts), never a plain hash: a tag is shown
 * to every reader, and a plain hash over a secret's hash would let one test guesses of the secret
 * offline. The key is in the database, so every replica, and the next start, gives the same tag.
 */
export function createEtagOf(key: Buffer): EtagOf {
  return (view, hidden = null) =>
    `"${createHmac('sha256', key)
      .update('admin-etag\0')
      .update(JSON.stringify([view, hidden]))
      .digest('base64url')
      .slice(0, 27)}"`
}

export interface Preconditions {
  ifMatch: string | undefined
  ifNoneMatch: string | undefined
}

const tags = (header: string) => header.split(',').map((t) => t.trim())

/** Throws 412 unless the request's conditions hold for the resource's current tag (undefined: none exists). */
export function checkPreconditions(pre: Preconditions, current: string | undefined): void {
  // §13.1.1: strong comparison, so a weak tag never matches; "*" matches any current representation.
  if (pre.ifMatch !== undefined) {
    const ok = current !== undefined && tags(pre.ifMatch).some((t) => t === '*' || t === current)
    if (!ok) throw new AdminProblem(412, 'the resource is not in the version If-Match names: read it again')
  }
  // §13.1.2: weak comparison; "*" fails when any representation exists (create only).
  if (pre.ifNoneMatch !== undefined && current !== undefined) {
    const strip = (t: string) => t.replace(/^W\//, '')
    if (tags(pre.ifNoneMatch).some((t) => t === '*' || strip(t) === current)) {
      throw new AdminProblem(412, 'the resource exists in a version If-None-Match excludes')
    }
  }
}
