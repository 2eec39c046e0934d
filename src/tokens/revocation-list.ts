// The replica's in-memory set of revoked JWT access token jtis (RFC 7009 for self-contained
// tokens). Loaded from revoked_tokens at start, kept current by LISTEN/NOTIFY, reloaded whole
// after the listening connection reconnects. JWT introspection then needs no database read.
import type { Clock } from '../domain/clock.js'
import type { RevocationStore } from '../stores/revocations.js'

export interface RevocationList {
  /** Loads the active revocations and subscribes to new ones. */
  start(): Promise<void>
  stop(): Promise<void>
  /** True when the jti is revoked and the revocation is still in force. */
  has(jti: string): boolean
  /** The revoking replica records its own revocation at once, before the NOTIFY round trip. */
  add(jti: string, expiresAt: number): void
  size(): number
}

export function createRevocationList(deps: { store: RevocationStore; clock: Clock }): RevocationList {
  const revoked = new Map<string, number>() // jti → expiresAt (ms)
  let unlisten: (() => Promise<void>) | undefined
  let lastPurge = 0

  async function reload() {
    const rows = await deps.store.listActive(deps.clock.now())
    for (const r of rows) revoked.set(r.jti, r.expiresAt)
  }

  function purge(now: number) {
    // Entries are useless once the token itself has expired; sweep at most once a minute.
    if (now - lastPurge < 60_000) return
    lastPurge = now
    for (const [jti, exp] of revoked) if (exp <= now) revoked.delete(jti)
  }

  return {
    async start() {
      unlisten = await deps.store.subscribe((e) => {
        // undefined: resubscribed after a reconnect, so notifications may have been missed.
        if (e === undefined) reload().catch(() => {})
        else revoked.set(e.jti, e.expiresAt)
      })
      await reload()
    },
    async stop() {
      await unlisten?.()
      unlisten = undefined
    },
    has(jti) {
      if (revoked.size === 0) return false
      const now = deps.clock.now()
      purge(now)
      const exp = revoked.get(jti)
      return exp !== undefined && exp > now
    },
    add(jti, expiresAt) {
      revoked.set(jti, expiresAt)
    },
    size: () => revoked.size,
  }
}
