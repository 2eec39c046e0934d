import { compactVerify, createLocalJWKSet, decodeProtectedHeader, importJWK, SignJWT, type JSONWebKeySet, type JWK } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createPgSigningKeyStore } from '../../src/stores/signing-keys.postgres.js'
import { deriveKeyEncryptionKey, decryptPrivateKey } from '../../src/keys/key-crypto.js'
import { createSigningKeyService } from '../../src/keys/key-service.js'
import type { Config } from '../../src/config.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let tdb: TestDb
beforeAll(async () => {
  tdb = await createTestDb()
})
afterAll(() => tdb.close())
beforeEach(async () => {
  await tdb.db.query('DELETE FROM signing_keys')
  await tdb.db.query('DELETE FROM clients')
})

const SECRET = 'correct horse battery staple'
const T0 = Date.UTC(2026, 0, 1)

function service(env: Record<string, string> | Config = {}, clock = createManualClock(T0)) {
  const config = 'issuer' in env ? (env as Config) : testConfig(env)
  const keys = createSigningKeyService({ config, store: createPgSigningKeyStore(tdb.db), clock })
  return { keys, clock }
}

async function rows() {
  const { rows } = await tdb.db.query<{ kid: string; alg: string; private_jwk: string; encrypted: boolean }>(
    'SELECT kid, alg, private_jwk, encrypted FROM signing_keys ORDER BY alg, activate_at',
  )
  return rows
}

/** Verifies with jose against the published JWKS, independently of our verify(). */
async function joseVerify(jwks: { keys: unknown[] }, jwt: string) {
  return compactVerify(jwt, createLocalJWKSet(jwks as JSONWebKeySet))
}

describe('ensureKeys', () => {
  it('creates one RS256 and one ES256 key on first start, and nothing on the next', async () => {
    const { keys } = service()
    await keys.ensureKeys()
    await keys.ensureKeys()
    const stored = await rows()
    expect(stored.map((r) => r.alg)).toEqual(['ES256', 'RS256'])
    expect(stored.every((r) => !r.encrypted && 'd' in JSON.parse(r.private_jwk))).toBe(true)
    const listed = (await keys.list()).sort((a, b) => a.alg.localeCompare(b.alg))
    expect(listed.map((k) => [k.alg, k.status, k.activateAt, k.retireAt, k.encrypted])).toEqual([
      ['ES256', 'current', T0, undefined, false],
      ['RS256', 'current', T0, undefined, false],
    ])
    expect(keys.algorithms()).toEqual(['ES256', 'RS256'])
    keys.close()
  })

  it('creates exactly one key per algorithm when replicas start together', async () => {
    const replicas = [service(), service(), service()]
    await Promise.all(replicas.map((r) => r.keys.ensureKeys()))
    expect((await rows()).map((r) => r.alg)).toEqual(['ES256', 'RS256'])
    const kids = await Promise.all(
      replicas.map(async (r) =>
        (await r.keys.jwks()).keys
          .map((k) => k.kid)
          .sort()
          .join(),
      ),
    )
    expect(new Set(kids).size).toBe(1)
    replicas.forEach((r) => r.keys.close())
  })

  it.each(['PS256', 'EdDSA'] as const)('adds a key for ACCESS_TOKEN_SIGNING_ALG=%s and signs with it', async (alg) => {
    const { keys } = service({ ACCESS_TOKEN_SIGNING_ALG: alg })
    await keys.ensureKeys()
    expect((await rows()).map((r) => r.alg).sort()).toEqual(['ES256', 'RS256', alg].sort())
    const jwt = await keys.sign({ sub: 'x' }, { alg, typ: 'at+jwt' })
    const jwks = await keys.jwks()
    expect((await joseVerify(jwks, jwt)).protectedHeader).toMatchObject({ alg, typ: 'at+jwt' })
    expect((await keys.verify(jwt, { typ: 'at+jwt' })).payload).toEqual({ sub: 'x' })
    keys.close()
  })
})

describe('encrypted storage (KEY_ENCRYPTION_SECRET)', () => {
  it('stores private keys as AES-256-GCM ciphertext that decrypts back to the JWK', async () => {
    const { keys } = service({ KEY_ENCRYPTION_SECRET: SECRET })
    await keys.ensureKeys()
    for (const r of await rows()) {
      expect(r.encrypted).toBe(true)
      expect(r.private_jwk).toMatch(/^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/)
      expect(() => JSON.parse(r.private_jwk)).toThrow()
      expect(r.private_jwk).not.toContain('"d"')
      const jwk = JSON.parse(decryptPrivateKey(r.private_jwk, deriveKeyEncryptionKey(SECRET), r.kid)) as Record<string, unknown>
      expect(typeof jwk.d).toBe('string')
    }
    const jwt = await keys.sign({ sub: 'x' }, { alg: 'ES256', typ: 'at+jwt' })
    keys.close()
    const replica = service({ KEY_ENCRYPTION_SECRET: SECRET }).keys // same secret: loads and verifies
    await replica.ensureKeys()
    expect((await replica.verify(jwt)).payload).toEqual({ sub: 'x' })
    replica.close()
  })

  it('refuses to start with a wrong or missing secret, without revealing it', async () => {
    const first = service({ KEY_ENCRYPTION_SECRET: SECRET }).keys
    await first.ensureKeys()
    first.close()
    const wrong = 'another secret, 16+ chars'
    const e1 = await service({ KEY_ENCRYPTION_SECRET: wrong })
      .keys.ensureKeys()
      .catch((e: Error) => e)
    expect(e1).toBeInstanceOf(Error)
    expect((e1 as Error).message).toMatch(
      /^signing key \S+ cannot be decrypted: KEY_ENCRYPTION_SECRET differs from the one it was stored with$/,
    )
    expect((e1 as Error).message).not.toContain(wrong)
    const e2 = await service()
      .keys.ensureKeys()
      .catch((e: Error) => e)
    expect((e2 as Error).message).toMatch(/^signing key \S+ is stored encrypted but KEY_ENCRYPTION_SECRET is not set$/)
    // Nor may a rotation without the secret add a plaintext key beside the encrypted ones.
    await expect(service().keys.rotate()).rejects.toThrow(/KEY_ENCRYPTION_SECRET is not set$/)
    expect((await rows()).length).toBe(2)
  })
})

describe('start-up maintenance', () => {
  // Attack: the keys were written in plaintext before KEY_ENCRYPTION_SECRET was set, so every
  // copy of the data taken until then (a backup, a copied DATA_DIR) holds them. Encrypting them in
  // place would leave those copies able to sign tokens forever; replacing them makes the stolen
  // keys worthless once the tokens they signed have expired.
  it('replaces keys stored in plaintext by new encrypted keys, so a stolen copy of an old key stops being accepted', async () => {
    const clock = createManualClock(T0)
    const plain = service({}, clock).keys
    expect(await plain.ensureKeys()).toEqual({ replaced: [], erased: [], removed: [] })
    const oldTokens = [
      await plain.sign({ sub: 'es' }, { alg: 'ES256', typ: 'at+jwt' }),
      await plain.sign({ sub: 'rs' }, { alg: 'RS256', typ: 'JWT' }),
    ]
    const old = await rows()
    const oldKid = Object.fromEntries(old.map((r) => [r.alg, r.kid])) as Record<'ES256' | 'RS256', string>
    const stolen = old.map((r) => ({ kid: r.kid, alg: r.alg, jwk: JSON.parse(r.private_jwk) as JWK & { d: string } }))
    plain.close()

    clock.advance(10)
    const env = { KEY_ENCRYPTION_SECRET: SECRET, KEY_ACTIVATION_DELAY: '600' }
    const withSecret = service(env, clock).keys
    const changes = await withSecret.ensureKeys()
    const activateAt = T0 + 10_000 + 600_000
    const retireAt = activateAt + 3600_000 // ACCESS_TOKEN_LIFETIME: the longest token the old keys may sign
    const fresh = (await withSecret.list()).filter((k) => !old.some((r) => r.kid === k.kid)).sort((a, b) => a.alg.localeCompare(b.alg))
    expect(fresh.map((k) => [k.alg, k.status, k.activateAt, k.retireAt, k.privateKey])).toEqual([
      ['ES256', 'pending', activateAt, undefined, 'encrypted'],
      ['RS256', 'pending', activateAt, undefined, 'encrypted'],
    ])
    const newKid = { ES256: fresh[0]!.kid, RS256: fresh[1]!.kid }
    expect(changes).toEqual({
      replaced: [
        { kid: oldKid.ES256, alg: 'ES256', replacedBy: newKid.ES256, signsUntil: activateAt },
        { kid: oldKid.RS256, alg: 'RS256', replacedBy: newKid.RS256, signsUntil: activateAt },
      ],
      erased: [],
      removed: [],
      purged: true, // the old row versions are gone from the table's files too
    })
    // From now on no private part is readable without the secret, not even the old keys' (they
    // sign until the new keys, already published, take over: a new key is announced before it signs).
    for (const r of await rows()) {
      expect(r.encrypted).toBe(true)
      for (const s of stolen) expect(r.private_jwk).not.toContain(s.jwk.d)
    }
    expect(decodeProtectedHeader(await withSecret.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid).toBe(oldKid.ES256)
    expect(await withSecret.ensureKeys()).toEqual({ replaced: [], erased: [], removed: [] }) // once

    // The new keys activate: the old ones never sign again, and their private parts are erased.
    clock.set(activateAt)
    expect(decodeProtectedHeader(await withSecret.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid).toBe(newKid.ES256)
    expect(decodeProtectedHeader(await withSecret.sign({}, { alg: 'RS256', typ: 'JWT' })).kid).toBe(newKid.RS256)
    await withSecret.refresh()
    const after = await tdb.db.query<{ kid: string; private_jwk: string | null }>('SELECT kid, private_jwk FROM signing_keys ORDER BY kid')
    expect(
      after.rows
        .filter((r) => r.private_jwk === null)
        .map((r) => r.kid)
        .sort(),
    ).toEqual([oldKid.ES256, oldKid.RS256].sort())
    expect(Object.fromEntries((await withSecret.list()).map((k) => [k.kid, [k.status, k.privateKey, k.retireAt]]))).toEqual({
      [oldKid.ES256]: ['retired', 'erased', retireAt],
      [oldKid.RS256]: ['retired', 'erased', retireAt],
      [newKid.ES256]: ['current', 'encrypted', undefined],
      [newKid.RS256]: ['current', 'encrypted', undefined],
    })

    // What the old keys signed stays valid until it expires; then the old keys are gone, and a token
    // forged with a stolen copy of one of them is refused.
    clock.set(retireAt - 1)
    for (const authz of oldTokens) await withSecret.verify(authz)
    clock.set(retireAt)
    for (const authz of oldTokens) await expect(withSecret.verify(authz)).rejects.toThrow('invalid JWT: unknown kid')
    for (const s of stolen) {
      const forged = await new SignJWT({ sub: 'admin' })
        .setProtectedHeader({ alg: s.alg, kid: s.kid, typ: 'at+jwt' })
        .sign(await importJWK(s.jwk, s.alg))
      await expect(withSecret.verify(forged)).rejects.toThrow('invalid JWT: unknown kid')
    }
    expect(await withSecret.ensureKeys()).toEqual({ replaced: [], erased: [], removed: [oldKid.ES256, oldKid.RS256].sort() })
    withSecret.close()
    // From now on the secret is required.
    await expect(service({}, clock).keys.ensureKeys()).rejects.toThrow(/is stored encrypted but KEY_ENCRYPTION_SECRET is not set$/)
  })

  it('replaces plaintext keys once when replicas start with KEY_ENCRYPTION_SECRET together', async () => {
    const plain = service().keys
    await plain.ensureKeys()
    plain.close()
    const replicas = [
      service({ KEY_ENCRYPTION_SECRET: SECRET }),
      service({ KEY_ENCRYPTION_SECRET: SECRET }),
      service({ KEY_ENCRYPTION_SECRET: SECRET }),
    ]
    const changes = await Promise.all(replicas.map((r) => r.keys.ensureKeys()))
    expect(changes.flatMap((c) => c.replaced).length).toBe(2) // one replacement per algorithm, by whichever replica came first
    expect((await rows()).map((r) => r.alg)).toEqual(['ES256', 'ES256', 'RS256', 'RS256'])
    const jwks = await Promise.all(
      replicas.map(async (r) =>
        (await r.keys.jwks()).keys
          .map((k) => k.kid)
          .sort()
          .join(),
      ),
    )
    expect(new Set(jwks).size).toBe(1)
    replicas.forEach((r) => r.keys.close())
  })

  it('deletes a retired key at the first start after the last token it signed has expired', async () => {
    const { keys, clock } = service({ KEY_ACTIVATION_DELAY: '60' })
    await keys.ensureKeys()
    const oldKid = (await keys.jwks()).keys.find((k) => k.alg === 'ES256')!.kid!
    const [created] = await keys.rotate('ES256')
    const retireAt = (await keys.list()).find((k) => k.kid === oldKid)!.retireAt!
    expect(retireAt).toBe(T0 + (60 + 3600) * 1000) // activation + ACCESS_TOKEN_LIFETIME, the longest token
    keys.close()

    clock.set(retireAt - 1000)
    const early = service({ KEY_ACTIVATION_DELAY: '60' }, clock).keys
    expect(await early.ensureKeys()).toEqual({ replaced: [], erased: [oldKid], removed: [] }) // superseded since T0 + 60 s
    expect((await rows()).map((r) => r.kid)).toContain(oldKid)
    early.close()

    clock.set(retireAt)
    const late = service({ KEY_ACTIVATION_DELAY: '60' }, clock).keys
    expect(await late.ensureKeys()).toEqual({ replaced: [], erased: [], removed: [oldKid] })
    expect((await rows()).map((r) => r.kid).sort()).toEqual(
      [created!.kid, (await keys.jwks()).keys.find((k) => k.alg === 'RS256')!.kid].sort(),
    )
    expect((await late.list()).map((k) => k.status).sort()).toEqual(['current', 'current'])
    late.close()
  })
})

describe('rotation', () => {
  it('publishes a new key at once, signs with it after the delay, drops the old one after the longest token', async () => {
    // A client's 7200 s access tokens outlive ACCESS_TOKEN_LIFETIME (3600) and ID_TOKEN_LIFETIME (300).
    await tdb.db.query(`INSERT INTO clients (client_id, access_token_lifetime) VALUES ('long-lived', 7200)`)
    const { keys, clock } = service({ KEY_ACTIVATION_DELAY: '3600' })
    await keys.ensureKeys()
    const oldKid = (await keys.jwks()).keys.find((k) => k.alg === 'ES256')!.kid!
    const rsaKid = (await keys.jwks()).keys.find((k) => k.alg === 'RS256')!.kid!
    const oldToken = await keys.sign({ sub: 'before' }, { alg: 'ES256', typ: 'at+jwt' })

    const [created] = await keys.rotate('ES256')
    expect(created).toMatchObject({ alg: 'ES256', status: 'pending', activateAt: T0 + 3600_000, retireAt: undefined })
    const newKid = created!.kid
    expect((await keys.jwks()).keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid, rsaKid].sort())
    expect(decodeProtectedHeader(await keys.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid).toBe(oldKid)
    const byKid = async () => Object.fromEntries((await keys.list()).map((k) => [k.kid, [k.status, k.retireAt]]))
    expect(await byKid()).toEqual({
      [oldKid]: ['current', T0 + (3600 + 7200) * 1000],
      [newKid]: ['pending', undefined],
      [rsaKid]: ['current', undefined],
    })

    clock.advance(3600)
    const newToken = await keys.sign({ sub: 'after' }, { alg: 'ES256', typ: 'at+jwt' })
    expect(decodeProtectedHeader(newToken).kid).toBe(newKid)
    expect((await byKid())[oldKid]![0]).toBe('retired')
    expect((await keys.verify(oldToken)).payload).toEqual({ sub: 'before' })
    await joseVerify(await keys.jwks(), oldToken)

    clock.advance(7199)
    expect((await keys.jwks()).keys.map((k) => k.kid)).toContain(oldKid)
    clock.advance(1) // retire_at reached: unpublished, no longer accepted
    expect((await keys.jwks()).keys.map((k) => k.kid).sort()).toEqual([newKid, rsaKid].sort())
    await expect(keys.verify(oldToken)).rejects.toThrow('invalid JWT: unknown kid')
    await expect(joseVerify(await keys.jwks(), oldToken)).rejects.toThrow()
    expect((await keys.verify(newToken)).payload).toEqual({ sub: 'after' })
    keys.close()
  })

  it('rotates every algorithm when none is named', async () => {
    const { keys } = service()
    await keys.ensureKeys()
    const created = await keys.rotate()
    expect(created.map((k) => [k.alg, k.status]).sort()).toEqual([
      ['ES256', 'pending'],
      ['RS256', 'pending'],
    ])
    expect((await rows()).length).toBe(4)
    keys.close()
  })

  it('lets a replica with a stale cache verify a key another replica created', async () => {
    // Configuration refuses a delay this short; the service is tested with it all the same.
    const a = service({ ...testConfig(), keyActivationDelay: 0 })
    const b = service({ ...testConfig(), keyActivationDelay: 0 })
    await a.keys.ensureKeys()
    await b.keys.ensureKeys()
    await b.keys.rotate('ES256')
    const jwt = await b.keys.sign({ sub: 'b' }, { alg: 'ES256', typ: 'at+jwt' })
    expect((await a.keys.verify(jwt)).payload).toEqual({ sub: 'b' }) // unknown kid → one reload
    a.keys.close()
    b.keys.close()
  })

  it('makes a replica sign with a key rotated elsewhere once its cache refreshes (every 60 s)', async () => {
    const clock = createManualClock(T0)
    const a = service({ KEY_ACTIVATION_DELAY: '3600' }, clock).keys
    const b = service({ KEY_ACTIVATION_DELAY: '3600' }, clock).keys
    await a.ensureKeys()
    await b.ensureKeys()
    const oldKid = decodeProtectedHeader(await a.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid
    const [created] = await b.rotate('ES256')
    clock.advance(59)
    expect((await a.jwks()).keys.map((k) => k.kid)).not.toContain(created!.kid) // cache still fresh
    clock.advance(3541) // the new key activates; a's cache is stale, so this call starts a reload
    expect(decodeProtectedHeader(await a.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid).toBe(oldKid) // still valid
    // The background reload is a real query: wait for it (protocol time does not move).
    await vi.waitFor(async () => expect(decodeProtectedHeader(await a.sign({}, { alg: 'ES256', typ: 'at+jwt' })).kid).toBe(created!.kid))
    a.close()
    b.close()
  })
})

describe('verify', () => {
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

  it('accepts our tokens, matching typ case-insensitively with or without application/ (RFC 8725 §3.11)', async () => {
    const { keys } = service()
    await keys.ensureKeys()
    const jwt = await keys.sign({ sub: 'x' }, { alg: 'ES256', typ: 'at+jwt' })
    const { protectedHeader } = await keys.verify(jwt, { typ: 'application/AT+JWT' })
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: protectedHeader.kid, typ: 'at+jwt' })
    const rs = await keys.sign({ sub: 'x' }, { alg: 'RS256', typ: 'application/JWT' })
    expect((await keys.verify(rs, { typ: 'jwt' })).payload).toEqual({ sub: 'x' })
    keys.close()
  })

  it('rejects malformed, unsigned, confused and tampered tokens with a plain Error', async () => {
    const { keys } = service()
    await keys.ensureKeys()
    const good = await keys.sign({ sub: 'x' }, { alg: 'ES256', typ: 'at+jwt' })
    const [h, p, s] = good.split('.') as [string, string, string]
    const header = decodeProtectedHeader(good)
    const rsaKid = (await keys.jwks()).keys.find((k) => k.alg === 'RS256')!.kid!
    const cases: Array<[string, string, { typ?: string }?]> = [
      ['', 'invalid JWT: not a compact JWS'],
      ['a.b', 'invalid JWT: not a compact JWS'],
      [`${h}.${p}.${s}.x`, 'invalid JWT: not a compact JWS'],
      [`${h}.${p}.${s}=`, 'invalid JWT: not a compact JWS'],
      [`${b64('{')}.${p}.${s}`, 'invalid JWT: header is not JSON'],
      [`${b64([1])}.${p}.${s}`, 'invalid JWT: header is not an object'],
      [`${h}.${b64('"str"')}.${s}`, 'invalid JWT: payload is not an object'],
      [`${b64({ kid: header.kid })}.${p}.${s}`, 'invalid JWT: no alg'],
      [`${b64({ ...header, alg: 'none' })}.${p}.`, 'invalid JWT: unsupported alg'],
      [`${b64({ ...header, alg: 'HS256' })}.${p}.${s}`, 'invalid JWT: unsupported alg'],
      [`${b64({ ...header, crit: ['exp'] })}.${p}.${s}`, 'invalid JWT: unsupported crit'],
      [`${b64({ alg: 'ES256' })}.${p}.${s}`, 'invalid JWT: no kid'],
      [`${b64({ ...header, kid: 'nope' })}.${p}.${s}`, 'invalid JWT: unknown kid'],
      [`${b64({ ...header, kid: rsaKid })}.${p}.${s}`, 'invalid JWT: alg does not match the key'],
      [`${b64({ ...header, alg: 'RS256' })}.${p}.${s}`, 'invalid JWT: alg does not match the key'],
      [`${h}.${b64({ sub: 'admin' })}.${s}`, 'invalid JWT: bad signature'],
      [`${h}.${p}.${s.slice(0, 20)}`, 'invalid JWT: bad signature'],
      [good, 'invalid JWT: unexpected typ', { typ: 'token-introspection+jwt' }],
      [`${b64({ alg: header.alg, kid: header.kid })}.${p}.${s}`, 'invalid JWT: unexpected typ', { typ: 'at+jwt' }],
    ]
    for (const [jwt, message, opts] of cases) {
      const err = await keys.verify(jwt, opts).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err, jwt).toBeInstanceOf(Error)
      expect((err as Error).constructor, jwt).toBe(Error)
      expect((err as Error).message, jwt).toBe(message)
    }
    keys.close()
  })
})
