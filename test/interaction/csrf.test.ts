// CSRF tokens: HMACs under a server secret shared by every replica through the database
// (encrypted with KEY_ENCRYPTION_SECRET when set), bound to the browser's cookie.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createCsrfTokens } from '../../src/interaction/csrf.js'
import { applySeed } from '../../src/seed/apply.js'
import { createPgServerSecretStore } from '../../src/stores/server-secrets.postgres.js'
import { loadServerSecret } from '../../src/keys/server-secrets.js'
import { createTestApp, FORM, form } from '../helpers/app.js'
import { createTestDb } from '../helpers/db.js'

const csrfIn = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!
const cookiesOf = (set: string | string[] | undefined) =>
  [set ?? []]
    .flat()
    .map((c) => c.split(';')[0])
    .join('; ')

describe('CSRF tokens', () => {
  const tokens = createCsrfTokens(Buffer.alloc(32, 7))
  const binding = tokens.newBinding()

  it('verifies the token of its own binding only', () => {
    expect(binding).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(tokens.verify(binding, tokens.token(binding))).toBe(true)
    expect(tokens.verify(tokens.newBinding(), tokens.token(binding))).toBe(false)
    expect(tokens.verify(binding, undefined)).toBe(false)
    expect(tokens.verify(undefined, tokens.token(binding))).toBe(false)
    expect(tokens.verify('short', tokens.token('short'))).toBe(false)
    expect(tokens.verify(binding, `${tokens.token(binding)}x`)).toBe(false)
  })

  it('cannot be computed from the cookie alone: another secret, or the old sha256 scheme, gives no valid token', () => {
    expect(tokens.verify(binding, createCsrfTokens(Buffer.alloc(32, 8)).token(binding))).toBe(false)
    expect(tokens.verify(binding, createHash('sha256').update(`csrf:${binding}`).digest('base64url'))).toBe(false)
  })
})

describe('the CSRF secret', () => {
  it('is shared by replicas on one database: a form rendered by one is accepted by the other', async () => {
    const a = await createTestApp()
    const b = await createTestApp({ testDb: a.testDb })
    try {
      await applySeed(a.db, { users: [{ subjectId: 'u-1', username: 'alice', password: 'alice-pw' }] })
      const page = await a.app.inject({ method: 'GET', url: '/account/sign-in' })
      const res = await b.app.inject({
        method: 'POST',
        url: '/account/sign-in',
        headers: { ...FORM, cookie: cookiesOf(page.headers['set-cookie']) },
        payload: form({ csrf: csrfIn(page.body), username: 'alice', password: 'alice-pw' }),
      })
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/account')
      const { rows } = await a.db.query('SELECT name, encrypted FROM server_secrets ORDER BY name')
      // One csrf secret for both replicas (and the authorization endpoint's own, which MACs its
      // sign-in marker, federation's, which MACs where an upstream sign-out returns to, and the key
      // of unknown usernames' digests, src/interaction/password-check.ts; DPoP's nonces and the
      // passkey challenges are MACed with secrets of their own).
      expect(rows).toEqual([
        { name: 'authorize', encrypted: false },
        { name: 'csrf', encrypted: false },
        { name: 'dpop-nonce', encrypted: false },
        { name: 'federation-signout', encrypted: false },
        { name: 'passkey-challenge', encrypted: false },
        { name: 'username-hmac', encrypted: false },
      ])
    } finally {
      await b.close()
      await a.close()
    }
  })

  it('is stored encrypted with KEY_ENCRYPTION_SECRET, and a replica with another secret cannot read it', async () => {
    const testDb = await createTestDb()
    try {
      const env = { KEY_ENCRYPTION_SECRET: 'first-secret-0123456789' }
      const first = await createTestApp({ testDb, env })
      await first.close()
      const { rows } = await testDb.db.query<{ value: string; encrypted: boolean }>(
        'SELECT value, encrypted FROM server_secrets ORDER BY name',
      )
      const sealed = { value: expect.stringMatching(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/), encrypted: true }
      expect(rows).toEqual([sealed, sealed, sealed, sealed, sealed, sealed]) // authorize, csrf, dpop-nonce, federation-signout, passkey-challenge, username-hmac
      const load = (keyEncryptionSecret: string | undefined) =>
        loadServerSecret({ store: createPgServerSecretStore(testDb.db), clock: createManualClock(), keyEncryptionSecret }, 'csrf')
      await expect(load('second-secret-0123456789')).rejects.toThrow(
        /^server secret csrf cannot be decrypted: KEY_ENCRYPTION_SECRET differs from the one it was stored with$/,
      )
      await expect(load(undefined)).rejects.toThrow(/^server secret csrf is stored encrypted but KEY_ENCRYPTION_SECRET is not set$/)
      expect((await load(env.KEY_ENCRYPTION_SECRET)).length).toBe(32)
      const again = await createTestApp({ testDb, env })
      expect((await again.app.inject({ method: 'GET', url: '/account/sign-in' })).statusCode).toBe(200)
      await again.close()
    } finally {
      await testDb.close()
    }
  })

  // Attack: the secret was written in plaintext before KEY_ENCRYPTION_SECRET was set, so a copy of
  // the data taken until then holds it, and with it anyone can compute the CSRF token of any
  // browser whose binding cookie they know or plant. Encrypting it in place would keep such forged
  // tokens valid forever; a new secret makes them worthless at once.
  it('is replaced by a new secret, not encrypted in place, at the first start with KEY_ENCRYPTION_SECRET: a token computed with the old one is refused', async () => {
    const testDb = await createTestDb()
    try {
      const env = { KEY_ENCRYPTION_SECRET: 'first-secret-0123456789' }
      const load = (name: string, keyEncryptionSecret: string | undefined, onReplaced?: (name: string) => void) =>
        loadServerSecret(
          {
            store: createPgServerSecretStore(testDb.db),
            clock: createManualClock(),
            keyEncryptionSecret,
            ...(onReplaced ? { onReplaced } : {}),
          },
          name,
        )
      const stolen = { csrf: await load('csrf', undefined), authorize: await load('authorize', undefined) }
      expect((await testDb.db.query('SELECT name, encrypted FROM server_secrets ORDER BY name')).rows).toEqual([
        { name: 'authorize', encrypted: false },
        { name: 'csrf', encrypted: false },
      ])

      const told: string[] = []
      const csrf = await load('csrf', env.KEY_ENCRYPTION_SECRET, (n) => told.push(n))
      const authorize = await load('authorize', env.KEY_ENCRYPTION_SECRET, (n) => told.push(n))
      expect(told).toEqual(['csrf', 'authorize'])
      expect(csrf.length).toBe(32)
      expect(csrf.equals(stolen.csrf)).toBe(false)
      expect(authorize.equals(stolen.authorize)).toBe(false)
      const { rows } = await testDb.db.query<{ value: string; encrypted: boolean }>(
        'SELECT value, encrypted FROM server_secrets ORDER BY name',
      )
      expect(rows).toEqual([
        { value: expect.stringMatching(/^v1\./), encrypted: true },
        { value: expect.stringMatching(/^v1\./), encrypted: true },
      ])
      for (const r of rows) for (const old of Object.values(stolen)) expect(r.value).not.toContain(old.toString('base64url'))
      expect((await load('csrf', env.KEY_ENCRYPTION_SECRET, (n) => told.push(n))).equals(csrf)).toBe(true) // stays, once replaced
      expect(told).toEqual(['csrf', 'authorize'])
      await expect(load('csrf', undefined)).rejects.toThrow(/is stored encrypted but KEY_ENCRYPTION_SECRET is not set$/)

      // The server started with the secret refuses a form token computed with the stolen secret
      // for a binding cookie the attacker planted, and accepts its own.
      await applySeed(testDb.db, { users: [{ subjectId: 'u-1', username: 'alice', password: 'alice-pw' }] })
      const app = await createTestApp({ testDb, env })
      try {
        const binding = createCsrfTokens(stolen.csrf).newBinding()
        const forged = await app.app.inject({
          method: 'POST',
          url: '/account/sign-in',
          headers: { ...FORM, cookie: `__Host-authz-csrf=${binding}` },
          payload: form({ csrf: createCsrfTokens(stolen.csrf).token(binding), username: 'alice', password: 'alice-pw' }),
        })
        expect(forged.statusCode).toBe(403)
        expect(forged.body).toContain('This form has expired or did not come from the page you have open here')
        expect(forged.headers['set-cookie']).toBeUndefined() // no session
        const page = await app.app.inject({ method: 'GET', url: '/account/sign-in' })
        const own = await app.app.inject({
          method: 'POST',
          url: '/account/sign-in',
          headers: { ...FORM, cookie: cookiesOf(page.headers['set-cookie']) },
          payload: form({ csrf: csrfIn(page.body), username: 'alice', password: 'alice-pw' }),
        })
        expect(own.statusCode).toBe(303)
      } finally {
        await app.close()
      }
    } finally {
      await testDb.close()
    }
  })
})
