// The stored form of a password hash and its cost: new hashes take the cost the process was
// configured with (PASSWORD_HASH_COST), and a hash keeps verifying after the cost changes.
import { afterEach, describe, expect, it } from 'vitest'
import { configurePasswordHashing, DEFAULT_PASSWORD_HASH_COST, hashPassword, verifyPassword } from '../../src/interaction/passwords.js'
import { loadConfig } from '../../src/config.js'
import { TEST_PASSWORD_HASH_COST } from '../helpers/password-cost.js'

const STORED = /^scrypt\$(\d+)\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/

afterEach(() => configurePasswordHashing(TEST_PASSWORD_HASH_COST))

describe('password hashes', () => {
  it('are made at N = 16384 by default, the cost a server without PASSWORD_HASH_COST uses', async () => {
    expect(loadConfig({ ISSUER: 'https://authz.test' }).passwordHashCost).toBe(DEFAULT_PASSWORD_HASH_COST)
    configurePasswordHashing(DEFAULT_PASSWORD_HASH_COST)
    expect(STORED.exec(await hashPassword('correct horse'))?.[1]).toBe('16384')
  })

  it('take the configured cost, and one made at another cost still verifies', async () => {
    configurePasswordHashing(12)
    const older = await hashPassword('correct horse')
    expect(STORED.exec(older)?.[1]).toBe('4096')
    configurePasswordHashing(11)
    expect(STORED.exec(await hashPassword('correct horse'))?.[1]).toBe('2048')
    expect(await verifyPassword('correct horse', older)).toBe(true)
    expect(await verifyPassword('wrong horse', older)).toBe(false)
  })

  it('refuses a PASSWORD_HASH_COST outside 10 to 20', () => {
    for (const cost of ['9', '21', 'fast']) {
      expect(() => loadConfig({ ISSUER: 'https://authz.test', PASSWORD_HASH_COST: cost })).toThrow(/PASSWORD_HASH_COST/)
    }
  })
})
