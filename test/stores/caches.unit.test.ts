// The CLIENT_CACHE_TTL caches over the client/resource stores and the replica's revocation list.
import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import type { Client } from '../../src/domain/types.js'
import { UnavailableError } from '../../src/errors.js'
import { createRevocationList } from '../../src/tokens/revocation-list.js'
import {
  createCacheInvalidation,
  createCachedClientStore,
  createCachedResourceStore,
  createCachedUserStore,
  createTtlCache,
} from '../../src/stores/cached.js'
import type { ClientStore } from '../../src/stores/clients.js'
import type { ResourceStore } from '../../src/stores/resources.js'
import type { UserStore } from '../../src/stores/users.js'

function countingClients() {
  const calls: string[] = []
  let enabled = true
  const store: ClientStore = {
    async findById(id) {
      calls.push(id)
      return id === 'known' ? ({ clientId: id, enabled } as Client) : undefined
    },
    list: async () => [],
    corsOrigins: async () => [],
    remove: async () => true,
    addSecret: async () => true,
    setEnabled: async () => true,
  }
  return { store, calls, disable: () => (enabled = false) }
}

describe('cached client store', () => {
  it('serves lookups from memory for the TTL, then sees changes', async () => {
    const clock = createManualClock()
    const inner = countingClients()
    const cached = createCachedClientStore(inner.store, { ttlSeconds: 5, clock })
    expect((await cached.findById('known'))?.enabled).toBe(true)
    inner.disable()
    expect((await cached.findById('known'))?.enabled).toBe(true) // stale within the bound
    expect(await cached.findById('unknown')).toBeUndefined()
    expect(await cached.findById('unknown')).toBeUndefined() // negative lookups are cached too
    expect(inner.calls).toEqual(['known', 'unknown'])
    clock.advance(5)
    expect((await cached.findById('known'))?.enabled).toBe(false)
    expect(inner.calls).toEqual(['known', 'unknown', 'known'])
  })

  it('shares one load between concurrent misses and does not cache failures', async () => {
    const clock = createManualClock()
    let loads = 0
    const cache = createTtlCache<number>({ ttlSeconds: 5, clock })
    const [a, b] = await Promise.all([cache.get('k', async () => ++loads), cache.get('k', async () => ++loads)])
    expect([a, b, loads]).toEqual([1, 1, 1])
    await expect(cache.get('e', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down')
    await new Promise((r) => setImmediate(r))
    expect(await cache.get('e', async () => 7)).toBe(7)
  })

  it('is bounded and is a pass-through with TTL 0', async () => {
    const clock = createManualClock()
    const cache = createTtlCache<string>({ ttlSeconds: 60, clock, maxKeys: 2 })
    let loads = 0
    for (const k of ['a', 'b', 'c', 'a']) await cache.get(k, async () => `${k}${++loads}`)
    expect(loads).toBe(4) // adding 'c' cleared the full cache
    const inner = countingClients()
    expect(createCachedClientStore(inner.store, { ttlSeconds: 0, clock })).toBe(inner.store)
  })

  it('a flood of unknown ids does not evict the known ones: they still serve while the database is away', async () => {
    // Anyone can make the token endpoint look up client ids that do not exist, and introspection
    // judges every token by its (cached) client: had the flood cleared the whole cache, an outage
    // starting afterwards would find no record to serve and answer 503 for every client.
    const clock = createManualClock()
    const down = { value: false }
    const inner = countingClients()
    const store: ClientStore = {
      ...inner.store,
      findById: (id) => (down.value ? Promise.reject(new UnavailableError('database unavailable')) : inner.store.findById(id)),
    }
    const cached = createCachedClientStore(store, { ttlSeconds: 5, clock, maxKeys: 8, maxStaleSeconds: 300 })
    expect((await cached.findById('known'))?.enabled).toBe(true)
    for (let i = 0; i < 50; i++) expect(await cached.findById(`nobody-${i}`)).toBeUndefined()
    down.value = true
    clock.advance(10) // past the TTL, within the stale bound
    expect((await cached.findById('known'))?.enabled).toBe(true)
    // Still bounded: only what the database said exists was kept.
    expect(inner.calls.filter((id) => id === 'known')).toHaveLength(1)
  })

  it('caches the resource catalogue', async () => {
    const clock = createManualClock()
    let loads = 0
    const inner: ResourceStore = {
      loadCatalogue: async () => ({
        apiScopes: new Map(),
        apiResources: new Map([['x', { name: String(++loads) } as never]]),
        identityResources: new Map(),
      }),
      findApiResource: async () => undefined,
      remove: async () => false,
    }
    const cached = createCachedResourceStore(inner, { ttlSeconds: 1, clock })
    await cached.loadCatalogue()
    await cached.loadCatalogue()
    expect(loads).toBe(1)
    clock.advance(1)
    await cached.loadCatalogue()
    expect(loads).toBe(2)
  })
})

describe('cached user store', () => {
  it('caches whether a user is enabled (absent too) for the TTL; a change made through it is seen at once', async () => {
    const clock = createManualClock()
    const enabled = new Map([['u-1', true]])
    const calls: string[] = []
    const inner = {
      isEnabled: async (sub: string) => (calls.push(sub), enabled.get(sub)),
      setEnabled: async (_username: string, on: boolean) => (enabled.set('u-1', on), true),
      remove: async () => enabled.delete('u-1'),
    } as unknown as UserStore
    const cached = createCachedUserStore(inner, { ttlSeconds: 5, clock })
    expect([await cached.isEnabled('u-1'), await cached.isEnabled('u-2')]).toEqual([true, undefined])
    enabled.set('u-1', false) // as another replica or the CLI does
    expect([await cached.isEnabled('u-1'), await cached.isEnabled('u-2')]).toEqual([true, undefined]) // stale within the bound
    expect(calls).toEqual(['u-1', 'u-2'])
    clock.advance(5)
    expect(await cached.isEnabled('u-1')).toBe(false)
    await cached.setEnabled('alice', true)
    expect(await cached.isEnabled('u-1')).toBe(true)
    await cached.remove('alice')
    expect(await cached.isEnabled('u-1')).toBeUndefined()
    expect(calls).toEqual(['u-1', 'u-2', 'u-1', 'u-1', 'u-1'])
    expect(createCachedUserStore(inner, { ttlSeconds: 0, clock })).toBe(inner)
  })
})

describe('revocation list', () => {
  it('loads at start, follows notifications, reloads after a reconnect, forgets expired entries', async () => {
    const clock = createManualClock()
    const now = clock.now()
    let rows = [{ jti: 'a', expiresAt: now + 10_000 }]
    let handler: ((e: { jti: string; expiresAt: number } | undefined) => void) | undefined
    const list = createRevocationList({
      clock,
      store: {
        revoke: async () => {},
        listActive: async () => rows,
        removeExpired: async () => 0,
        subscribe: async (h) => ((handler = h), async () => {}),
      },
    })
    await list.start()
    expect(list.has('a')).toBe(true)
    handler!({ jti: 'b', expiresAt: now + 20_000 })
    expect(list.has('b')).toBe(true)
    rows = [{ jti: 'c', expiresAt: now + 20_000 }]
    handler!(undefined) // reconnected: resynchronise
    await new Promise((r) => setImmediate(r))
    expect(list.has('c')).toBe(true)
    list.add('d', now + 5_000)
    expect(list.has('d')).toBe(true)
    clock.advance(10)
    expect([list.has('a'), list.has('b'), list.has('d')]).toEqual([false, true, false])
    clock.advance(60)
    expect(list.has('b')).toBe(false)
    expect(list.size()).toBe(0)
    expect(list.has('never')).toBe(false)
  })
})

describe('cache invalidation', () => {
  it('drops the caches of the kind that changed, and all of them after a missed notification', async () => {
    const clock = createManualClock()
    const invalidation = createCacheInvalidation()
    const inner = countingClients()
    const clients = createCachedClientStore(inner.store, { ttlSeconds: 300, clock, invalidation })
    const enabledCalls: string[] = []
    const isEnabled = async (subjectId: string) => {
      enabledCalls.push(subjectId)
      return true
    }
    const users = createCachedUserStore({ isEnabled } as unknown as UserStore, { ttlSeconds: 300, clock, invalidation })
    await clients.findById('known')
    await users.isEnabled('alice-1')
    inner.disable()
    invalidation.changed('users') // not the clients' kind: they stay cached
    expect((await clients.findById('known'))?.enabled).toBe(true)
    expect(await users.isEnabled('alice-1')).toBe(true)
    invalidation.changed('clients')
    expect((await clients.findById('known'))?.enabled).toBe(false)
    invalidation.changed(undefined) // resubscribed after a reconnect: anything may have changed
    await clients.findById('known')
    await users.isEnabled('alice-1')
    expect(inner.calls).toEqual(['known', 'known', 'known'])
    expect(enabledCalls).toEqual(['alice-1', 'alice-1', 'alice-1'])
  })
})
