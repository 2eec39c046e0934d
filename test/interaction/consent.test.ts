import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createConsentService, type ConsentService } from '../../src/interaction/consent.js'
import { applySeed } from '../../src/seed/apply.js'
import { createPgConsentStore } from '../../src/stores/consents.postgres.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

const T0 = Date.UTC(2026, 0, 1)
const web = { clientId: 'web', requireConsent: true }
const trusted = { clientId: 'trusted', requireConsent: false }

let authz: TestDb
let consent: ConsentService
const clock = createManualClock(T0)

beforeAll(async () => {
  authz = await createTestDb()
  await applySeed(authz.db, {
    clients: [{ clientId: 'web', requireConsent: true }, { clientId: 'trusted' }],
    users: [
      { subjectId: 'alice-1', username: 'alice' },
      { subjectId: 'bob-1', username: 'bob' },
    ],
  })
  consent = createConsentService({ clock, consents: createPgConsentStore(authz.db) })
})
afterAll(() => authz.close())

describe('consent service', () => {
  it('never asks for a client without requireConsent, whatever was granted', async () => {
    expect(await consent.required(trusted, 'alice-1', ['openid', 'profile', 'offline_access', 'orders.write'])).toBe(false)
    expect(await consent.missing(trusted, 'alice-1', ['openid'])).toEqual([])
  })

  it('asks for every scope not yet granted, openid alone and offline_access included', async () => {
    expect(await consent.required(web, 'alice-1', ['openid'])).toBe(true)
    expect(await consent.missing(web, 'alice-1', ['openid', 'offline_access', 'openid'])).toEqual(['openid', 'offline_access'])
    // Nothing requested, nothing to agree to.
    expect(await consent.required(web, 'alice-1', [])).toBe(false)
    expect(await consent.required(web, 'alice-1', [''])).toBe(false)
  })

  it('does not ask again for a subset of what was remembered; asks for a new scope', async () => {
    const stored = await consent.grant('alice-1', 'web', ['openid', 'profile', 'offline_access'], true)
    expect(stored).toEqual({
      subjectId: 'alice-1',
      clientId: 'web',
      scopes: ['openid', 'profile', 'offline_access'],
      createdAt: T0,
      updatedAt: T0,
    })
    expect(await consent.required(web, 'alice-1', ['openid', 'profile', 'offline_access'])).toBe(false)
    expect(await consent.required(web, 'alice-1', ['profile'])).toBe(false)
    expect(await consent.missing(web, 'alice-1', ['openid', 'email'])).toEqual(['email'])
    // Per user and per client.
    expect(await consent.required(web, 'bob-1', ['openid'])).toBe(true)
    expect(await consent.required({ clientId: 'other', requireConsent: true }, 'alice-1', ['openid'])).toBe(true)
  })

  it('merges a later grant and stamps it with the clock', async () => {
    clock.advance(3600)
    const merged = await consent.grant('alice-1', 'web', ['email'], true)
    expect(merged).toEqual({
      subjectId: 'alice-1',
      clientId: 'web',
      scopes: ['openid', 'profile', 'offline_access', 'email'],
      createdAt: T0,
      updatedAt: T0 + 3_600_000,
    })
    expect(await consent.required(web, 'alice-1', ['openid', 'email'])).toBe(false)
    expect(await consent.list('alice-1')).toEqual([merged])
  })

  it('stores nothing for a decision not to be remembered, and keeps what was remembered', async () => {
    expect(await consent.grant('alice-1', 'web', ['orders.read'], false)).toBeUndefined()
    expect(await consent.grant('bob-1', 'web', ['openid'], false)).toBeUndefined()
    expect(await consent.required(web, 'alice-1', ['orders.read'])).toBe(true)
    expect(await consent.required(web, 'alice-1', ['email'])).toBe(false)
    expect(await consent.list('bob-1')).toEqual([])
    expect(await consent.grant('bob-1', 'web', [], true)).toBeUndefined()
    expect(await consent.list('bob-1')).toEqual([])
  })

  it('asks again after a revoke', async () => {
    expect(await consent.revoke('alice-1', 'web')).toBe(1)
    expect(await consent.required(web, 'alice-1', ['profile'])).toBe(true)
    await consent.grant('alice-1', 'web', ['openid'], true)
    await consent.grant('alice-1', 'trusted', ['openid'], true)
    expect(await consent.revoke('alice-1')).toBe(2)
    expect(await consent.required(web, 'alice-1', ['openid'])).toBe(true)
    expect(await consent.list('alice-1')).toEqual([])
  })
})
