// Short-lived in-process caches over the client and resource stores, and over whether a user is
// enabled. Keeps the token and introspection hot paths free of database round trips.
// A change (disabled client or user, rotated secret, new scope) is committed with a NOTIFY
// (migration 0031's triggers, whoever writes: seed, CLI, admin API, SQL by hand), on which every
// replica drops the caches it touches (createCacheInvalidation). ARCHITECTURE.md allows the caches
// only where a stale read is harmless for a bounded, configured time: CLIENT_CACHE_TTL seconds is
// the longest a change takes when its notification is missed.
// While the database cannot be reached, an entry loaded before the outage keeps serving for up
// to CLIENT_CACHE_MAX_STALE seconds past its TTL, so JWT issuance for known clients goes on; the
// staleness is bounded the same way (a change made just before the outage may take that long).
import type { Clock } from '../domain/clock.js'
import type { ConfigChange } from './config-changes.js'
import { isUnavailable } from '../errors.js'
import type { ApiResource, Client } from '../domain/types.js'
import type { ClientStore } from './clients.js'
import type { ResourceCatalogue, ResourceStore } from './resources.js'
import type { UserStore } from './users.js'

/** Bound on cached keys, so that a flood of unknown client ids cannot grow memory without limit (see shrink). */
export const MAX_CACHED_KEYS = 10_000

interface Entry<V> {
  value: Promise<V>
  expiresAt: number
  /** The last value loaded from the database, and when: what an outage may serve. */
  loaded?: { value: V; at: number }
}

export interface TtlCacheOptions {
  ttlSeconds: number
  clock: Clock
  maxKeys?: number
  /** How long past its TTL an entry may serve while the database is unavailable; 0: never. */
  maxStaleSeconds?: number
}

export interface CachedStoreOptions extends TtlCacheOptions {
  /** Drops the store's caches when a change is committed anywhere; without it only the TTL does. */
  invalidation?: CacheInvalidation
}

/** What to drop when a change of each kind is committed (src/stores/config-changes.ts). */
export interface CacheInvalidation {
  /** Registers `drop` for changes of this kind. */
  on(change: ConfigChange, drop: () => void): void
  /** A change was committed; undefined: some may have been missed, so every cache is dropped. */
  changed(change: ConfigChange | undefined): void
}

export function createCacheInvalidation(): CacheInvalidation {
  const drops: Array<{ change: ConfigChange; drop: () => void }> = []
  return {
    on: (change, drop) => void drops.push({ change, drop }),
    changed(change) {
      for (const d of drops) if (change === undefined || d.change === change) d.drop()
    },
  }
}

/** A TTL cache of promises: concurrent misses for one key share a single load. */
export function createTtlCache<V>(opts: TtlCacheOptions) {
  const entries = new Map<string, Entry<V>>()
  const max = opts.maxKeys ?? MAX_CACHED_KEYS
  const ttlMs = opts.ttlSeconds * 1000
  const maxStaleMs = (opts.maxStaleSeconds ?? 0) * 1000
  /**
   * Full: first drop what holds no record (a negative answer, a load under way) or can no longer
   * serve even during an outage. Anyone can make the token endpoint look up client ids that do
   * not exist, so a flood of them must not push out the records that introspection and JWT
   * issuance serve from while the database is away. Clears all when that frees less than half,
   * so a scan happens at most once per max/2 new keys.
   */
  function shrink(now: number): void {
    for (const [key, e] of entries) {
      if (e.loaded?.value === undefined || now - e.loaded.at >= ttlMs + maxStaleMs) entries.delete(key)
    }
    if (entries.size > max / 2) entries.clear()
  }
  return {
    get(key: string, load: () => Promise<V>): Promise<V> {
      const now = opts.clock.now()
      const hit = entries.get(key)
      if (hit && hit.expiresAt > now) return hit.value
      if (entries.size >= max) shrink(now)
      const fallback = hit?.loaded && now - hit.loaded.at < ttlMs + maxStaleMs ? hit.loaded : undefined
      const entry: Entry<V> = { value: undefined as never, expiresAt: now + ttlMs, ...(fallback ? { loaded: fallback } : {}) }
      entry.value = load().then(
        (value) => {
          entry.loaded = { value, at: now }
          return value
        },
        (err: unknown) => {
          // The database is away: serve what it said last, within the bound; retry after one TTL.
          if (fallback && isUnavailable(err)) return fallback.value
          // Any other failed load is not cached: the next caller retries.
          if (entries.get(key) === entry) entries.delete(key)
          throw err
        },
      )
      entries.set(key, entry)
      return entry.value
    },
    clear() {
      entries.clear()
    },
  }
}

export function createCachedClientStore(inner: ClientStore, opts: CachedStoreOptions): ClientStore {
  if (opts.ttlSeconds <= 0) return inner
  const cache = createTtlCache<Client | undefined>(opts)
  const origins = createTtlCache<string[]>({ ...opts, maxKeys: 1 })
  opts.invalidation?.on('clients', () => {
    cache.clear()
    origins.clear()
  })
  return {
    findById: (clientId) => cache.get(clientId, () => inner.findById(clientId)),
    list: () => inner.list(),
    corsOrigins: () => origins.get('', () => inner.corsOrigins()),
    async remove(clientId) {
      cache.clear()
      origins.clear()
      return inner.remove(clientId)
    },
    async addSecret(clientId, secret) {
      cache.clear()
      return inner.addSecret(clientId, secret)
    },
    async setEnabled(clientId, enabled) {
      cache.clear()
      origins.clear()
      return inner.setEnabled(clientId, enabled)
    },
  }
}

export function createCachedResourceStore(inner: ResourceStore, opts: CachedStoreOptions): ResourceStore {
  if (opts.ttlSeconds <= 0) return inner
  const catalogue = createTtlCache<ResourceCatalogue>({ ...opts, maxKeys: 1 })
  const apis = createTtlCache<ApiResource | undefined>(opts)
  opts.invalidation?.on('resources', () => {
    catalogue.clear()
    apis.clear()
  })
  return {
    loadCatalogue: () => catalogue.get('', () => inner.loadCatalogue()),
    findApiResource: (name) => apis.get(name, () => inner.findApiResource(name)),
    async remove(kind, name) {
      try {
        return await inner.remove(kind, name)
      } finally {
        catalogue.clear()
        apis.clear()
      }
    },
  }
}

/**
 * Only isEnabled is cached: the check every judged token of a user makes (token-reader.ts), so that
 * introspection keeps off the database. Everything else reads the database as before (sign-in,
 * userinfo's claims and the grants that issue want the user as it is now). A change made here
 * clears the cache at once; one made elsewhere (CLI, another replica) when its notification
 * arrives, or within the TTL when it is missed.
 */
export function createCachedUserStore(inner: UserStore, opts: CachedStoreOptions): UserStore {
  if (opts.ttlSeconds <= 0) return inner
  const enabled = createTtlCache<boolean | undefined>(opts)
  opts.invalidation?.on('users', () => enabled.clear())
  /** After the write, so that no lookup made before it commits survives it. */
  const cleared = async <R>(write: Promise<R>): Promise<R> => {
    try {
      return await write
    } finally {
      enabled.clear()
    }
  }
  return {
    findBySubjectId: (subjectId) => inner.findBySubjectId(subjectId),
    isEnabled: (subjectId) => enabled.get(subjectId, () => inner.isEnabled(subjectId)),
    findByUsername: (username) => inner.findByUsername(username),
    findByLoginHint: (hint) => inner.findByLoginHint(hint),
    list: () => inner.list(),
    upsert: (user) => cleared(inner.upsert(user)),
    setPasswordHash: (subjectId, hash) => cleared(inner.setPasswordHash(subjectId, hash)),
    setEnabled: (username, on) => cleared(inner.setEnabled(username, on)),
    remove: (username) => cleared(inner.remove(username)),
  }
}
