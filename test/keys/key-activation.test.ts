// A rotated key must reach every verifier's cached JWKS before it signs: a replica publishes it
// at its next key reload (every KEY_RELOAD_SECONDS), and a verifier keeps a JWKS for its
// Cache-Control max-age. Walks the timeline of a rotation second by second, with a verifier that
// starts caching at every possible second, and checks that each token signed at any moment
// carries a kid the verifier's cached JWKS holds.
import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, KEY_RELOAD_SECONDS, loadConfig } from '../../src/config.js'
import { createManualClock } from '../../src/domain/clock.js'
import { createDiscoveryService } from '../../src/flows/discovery/service.js'
import { createPgSigningKeyStore } from '../../src/stores/signing-keys.postgres.js'
import { createSigningKeyService } from '../../src/keys/key-service.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let tdb: TestDb
beforeAll(async () => {
  tdb = await createTestDb()
})
afterAll(() => tdb.close())

async function walkRotation(delay: number) {
  await tdb.db.query('DELETE FROM signing_keys')
  const T0 = Date.UTC(2026, 0, 1)
  const clock = createManualClock(T0)
  const config = testConfig({ KEY_ACTIVATION_DELAY: String(delay) })
  const store = createPgSigningKeyStore(tdb.db)
  const replica = createSigningKeyService({ config, store, clock }) // serves JWKS and signs
  const cli = createSigningKeyService({ config, store, clock }) // `authz keys rotate`, another process
  await replica.ensureKeys() // loaded at T0
  clock.advance(0.5)
  await cli.rotate('ES256')
  const maxAge = createDiscoveryService({ config, keys: replica }).maxAge

  // What the replica publishes and which key it signs with, each second after the rotation.
  const end = delay + KEY_RELOAD_SECONDS + 5
  const published: string[][] = []
  const signing: string[] = []
  for (let authz = 1; authz <= end; authz++) {
    clock.set(T0 + authz * 1000)
    if (authz % KEY_RELOAD_SECONDS === 0) await replica.refresh() // the replica's reload timer
    published[authz] = (await replica.jwks()).keys.map((k) => k.kid!)
    signing[authz] = decodeProtectedHeader(await replica.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid!
  }
  replica.close()
  cli.close()

  // A verifier that first fetches at second `start` and refetches whenever its copy has expired.
  const misses: string[] = []
  for (let start = 1; start <= end; start++) {
    let cached: string[] = []
    let expiresAt = -1
    for (let authz = start; authz <= end; authz++) {
      if (authz >= expiresAt) {
        cached = published[authz]!
        expiresAt = authz + maxAge
      }
      if (!cached.includes(signing[authz]!)) misses.push(`verifier from ${start} s misses the key signing at ${authz} s`)
    }
  }
  return { maxAge, misses, rotatedTo: signing[end] }
}

describe('KEY_ACTIVATION_DELAY covers the key reload plus the JWKS cache lifetime', () => {
  it.each([90, 120, 360, 3600])(
    'with %i s, no verifier respecting max-age meets a key it has not cached',
    { timeout: 60_000 },
    async (delay) => {
      const { maxAge, misses, rotatedTo } = await walkRotation(delay)
      expect(misses).toEqual([])
      expect(maxAge).toBe(Math.min(300, delay - KEY_RELOAD_SECONDS))
      expect(rotatedTo).toBeDefined()
    },
  )

  it('refuses a delay shorter than the key reload period', () => {
    expect(() => loadConfig({ KEY_ACTIVATION_DELAY: '30' })).toThrow(ConfigError)
    try {
      loadConfig({ KEY_ACTIVATION_DELAY: '59' })
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'KEY_ACTIVATION_DELAY must be an integer from 60 to 31536000 (replicas reload keys every 60 s), got "59"',
      ])
    }
    expect(loadConfig({ KEY_ACTIVATION_DELAY: '60' }).keyActivationDelay).toBe(60)
  })
})
