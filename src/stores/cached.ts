// Short-lived in-process caches over the client and resource stores. DESIGN.md allows them only
// where a stale read is harmless for a bounded, configured time: CLIENT_CACHE_TTL seconds is the
// longest a change (disabled client, rotated secret, new scope) takes to reach every replica.
// Keeps the token and introspection hot paths free of database round trips.
import type { Clock } from '../domain/clock.js'
import type { ApiResource, Client } from '../domain/types.js'
import type { ClientStore, ResourceCatalogue, ResourceStore } from './types.js'

/** Bound on cached keys, so that a flood of unknown client ids cannot grow memory without limit. */
export const MAX_CACHED_KEYS = 10_000

interface Entry<V> {
  value: Promise<V>
  expiresAt: number
}

/** A TTL cache of promises: concurrent misses for one key share a single load. */
export function createTtlCache<V>(opts: { ttlSeconds: number; clock: Clock; maxKeys?: number }) {
  const entries = new Map<string, Entry<V>>()
  const max = opts.maxKeys ?? MAX_CACHED_KEYS
  return {
    get(key: string, load: () => Promise<V>): Promise<V> {
      const now = opts.clock.now()
      const hit = entries.get(key)
      if (hit && hit.expiresAt > now) return hit.value
      if (entries.size >= max) entries.clear() // crude but bounded; the cache refills in one TTL
      const value = load()
      const entry = { value, expiresAt: now + opts.ttlSeconds * 1000 }
      entries.set(key, entry)
      // A failed load is not cached: the next caller retries.
      value.catch(() => {
        if (entries.get(key) === entry) entries.delete(key)
      })
      return value
    },
    clear() {
      entries.clear()
    },
  }
}

export function createCachedClientStore(inner: ClientStore, opts: { ttlSeconds: number; clock: Clock }): ClientStore {
  if (opts.ttlSeconds <= 0) return inner
  const cache = createTtlCache<Client | undefined>(opts)
  const origins = createTtlCache<string[]>({ ...opts, maxKeys: 1 })
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

export function createCachedResourceStore(inner: ResourceStore, opts: { ttlSeconds: number; clock: Clock }): ResourceStore {
  if (opts.ttlSeconds <= 0) return inner
  const catalogue = createTtlCache<ResourceCatalogue>({ ...opts, maxKeys: 1 })
  const apis = createTtlCache<ApiResource | undefined>(opts)
  return {
    loadCatalogue: () => catalogue.get('', () => inner.loadCatalogue()),
    findApiResource: (name) => apis.get(name, () => inner.findApiResource(name)),
  }
}
