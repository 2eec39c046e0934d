// The verified-JWT cache of the introspection service (src/tokens/token-reader.ts): bounded,
// answers repeats without a signature check, and every answer still checks the clock.
import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../../src/domain/clock.js'
import { createIntrospectionService } from '../../../src/flows/introspection/service.js'
import type { Client } from '../../../src/domain/types.js'
import type { GrantStore } from '../../../src/stores/grants.js'
import type { SigningKeyService } from '../../../src/keys/signing-keys.js'

const ISSUER = 'https://authz.test'

function setup(cacheSize: number) {
  const clock = createManualClock()
  const verified: string[] = []
  const iat = Math.floor(clock.now() / 1000)
  const keys = {
    async verify(jwt: string) {
      verified.push(jwt)
      return { payload: { iss: ISSUER, client_id: 'c', scope: 's', jti: jwt, iat, exp: iat + 60 }, protectedHeader: {} }
    },
  } as unknown as SigningKeyService
  const service = createIntrospectionService({
    config: { issuer: ISSUER, accessTokenSigningAlg: 'ES256' },
    clock,
    keys,
    grants: {} as GrantStore,
    revocations: { has: () => false },
    cacheSize,
    clients: { findById: async (clientId) => ({ clientId, enabled: true }) as Client },
    users: { isEnabled: async () => true },
  })
  const caller = { kind: 'client', clientId: 'c' } as const
  const active = async (n: number) => (await service.introspect(caller, `h.p${n}.s`)).active
  return { clock, verified, active }
}

describe('verified JWT cache', () => {
  it('holds at most cacheSize tokens, keeps those in use, and never outlives exp', async () => {
    const authz = setup(4)
    for (const n of [1, 2, 3, 4, 5, 6]) expect(await authz.active(n)).toBe(true)
    expect(authz.verified).toHaveLength(6)
    for (const n of [5, 6, 6, 5]) expect(await authz.active(n)).toBe(true) // cached
    expect(authz.verified).toHaveLength(6)
    expect(await authz.active(1)).toBe(true) // evicted: verified again
    expect(authz.verified.slice(6)).toEqual(['h.p1.s'])
    expect(await authz.active(5)).toBe(true) // in the older half: still cached, and kept
    expect(await authz.active(7)).toBe(true)
    expect(await authz.active(5)).toBe(true)
    expect(authz.verified.slice(6)).toEqual(['h.p1.s', 'h.p7.s'])
    authz.clock.advance(60)
    expect(await authz.active(5)).toBe(false) // cached, but expired
    expect(authz.verified).toHaveLength(8)
  })
})
