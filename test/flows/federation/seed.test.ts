// The seed file's identityProviders: validated like the rest (every problem with its JSON path),
// upserted by scheme, idempotent, the client secret encrypted at rest with KEY_ENCRYPTION_SECRET,
// and listed by `authz providers list` without the secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CliContext } from '../../../src/cli/context.js'
import { providersCommand } from '../../../src/cli/providers.js'
import { loadConfig } from '../../../src/config.js'
import { createManualClock } from '../../../src/domain/clock.js'
import { decryptAtRest, deriveKeyEncryptionKey } from '../../../src/keys/key-crypto.js'
import { applySeed, SeedError, seedWarningsFor, validateSeed } from '../../../src/seed/apply.js'
import { createPgIdentityProviderStore } from '../../../src/stores/identity-providers.postgres.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'

const KEY = 'a-key-encryption-secret-of-enough-length'
const CORP = {
  scheme: 'corp',
  displayName: 'Corporate sign-in',
  type: 'oidc',
  authority: 'https://login.example.com',
  clientId: 'authz-rp',
  clientSecret: 'upstream-secret',
  emailDomains: ['Example.com'],
}

let t: TestDb
beforeAll(async () => {
  t = await createTestDb()
})
afterAll(() => t?.close())

async function problems(input: unknown): Promise<string[]> {
  const err = await applySeed(t.db, input).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(SeedError)
  return (err as SeedError).problems
}

const rows = async () =>
  (await t.db.query('SELECT scheme, client_secret, client_secret_encrypted, updated_at FROM identity_providers ORDER BY scheme')).rows

describe('identityProviders in the seed file', () => {
  it('stores a provider with its defaults, the secret encrypted, and applies again without writing', async () => {
    await applySeed(t.db, { identityProviders: [CORP] }, 'invalid', { keyEncryptionSecret: KEY })
    const stored = await createPgIdentityProviderStore(t.db).findByScheme('corp')
    expect(stored).toEqual({
      scheme: 'corp',
      displayName: 'Corporate sign-in',
      type: 'oidc',
      authority: 'https://login.example.com',
      clientId: 'authz-rp',
      clientSecret: { value: expect.stringMatching(/^v1\./) as unknown, encrypted: true },
      scope: 'openid profile email',
      enabled: true,
      emailDomains: ['example.com'],
      linkByVerifiedEmail: false,
    })
    const aad = 'identity-provider:corp'
    expect(decryptAtRest(stored!.clientSecret!.value, deriveKeyEncryptionKey(KEY), aad, 'secret')).toBe('upstream-secret')
    const before = await rows()
    await applySeed(t.db, { identityProviders: [CORP] }, 'invalid', { keyEncryptionSecret: KEY })
    expect(await rows()).toEqual(before)
  })

  it('keeps the secret plain without KEY_ENCRYPTION_SECRET, and none for a public client', async () => {
    await applySeed(t.db, {
      identityProviders: [
        { ...CORP, scheme: 'plain' },
        { ...CORP, scheme: 'public', clientSecret: undefined },
      ],
    })
    const store = createPgIdentityProviderStore(t.db)
    expect((await store.findByScheme('plain'))?.clientSecret).toEqual({ value: 'upstream-secret', encrypted: false })
    expect((await store.findByScheme('public'))?.clientSecret).toBeUndefined()
  })

  it('names every problem with its JSON path', async () => {
    expect(
      await problems({
        identityProviders: [
          { ...CORP, type: 'saml' },
          { ...CORP, scheme: 'web', authority: 'http://login.example.com' },
          { ...CORP, scheme: 'local' },
          { ...CORP, scheme: 'q', authority: 'https://login.example.com/?tenant=1' },
          { ...CORP, scheme: 'd', emailDomains: ['not a domain'], scope: 'profile email' },
          { ...CORP, scheme: 'x', metadataAddress: 'https://x' },
          CORP,
        ],
      }),
    ).toEqual([
      'identityProviders[0].type: "saml" is not a supported type: "oidc" is the only one',
      'identityProviders[1].authority: must use https (http only for localhost, *.localhost, 127.0.0.1 and [::1]), no query, fragment or credentials',
      'identityProviders[2].scheme: "local" is reserved (acr_values idp:local means the password form)',
      'identityProviders[3].authority: must use https (http only for localhost, *.localhost, 127.0.0.1 and [::1]), no query, fragment or credentials',
      'identityProviders[4].scope: must include openid',
      'identityProviders[4].emailDomains[0]: must be a domain name such as example.com',
      'identityProviders[5]: Unrecognized key: "metadataAddress"',
      'identityProviders[6].scheme: duplicate identity provider "corp"',
    ])
  })

  it('allows http for this machine only', async () => {
    for (const authority of ['http://localhost:8080', 'http://idp.localhost', 'http://127.0.0.1:9000/realms/x', 'http://[::1]:9000']) {
      expect(() => validateSeed({ identityProviders: [{ ...CORP, authority }] })).not.toThrow()
    }
  })

  it('warns about a client restricted to a scheme that does not exist, and applies it', async () => {
    const client = { clientId: 'web', identityProviderRestrictions: ['corp', 'gone'] }
    const seed = validateSeed({ clients: [client] })
    await applySeed(t.db, { clients: [client] })
    expect(await seedWarningsFor(t.db, seed)).toEqual([
      'clients[0].identityProviderRestrictions[1]: client "web" names "gone", which is not an identity provider',
    ])
  })
})

describe('authz providers list', () => {
  const ctx = (out: string[]): CliContext => ({
    out: (l) => void out.push(l),
    err: (l) => void out.push(l),
    stdin: process.stdin,
    clock: createManualClock(0),
    config: () => loadConfig({ ISSUER: 'https://id.example.org' }),
    db: async () => t.db,
  })

  it('lists the providers with the redirect URI to register, never the secret', async () => {
    const out: string[] = []
    await providersCommand.run(['list'], ctx(out))
    expect(out).toEqual([
      'SCHEME  ENABLED  NAME               AUTHORITY                  REDIRECT URI',
      'corp    yes      Corporate sign-in  https://login.example.com  https://id.example.org/federation/corp/signin',
      'plain   yes      Corporate sign-in  https://login.example.com  https://id.example.org/federation/plain/signin',
      'public  yes      Corporate sign-in  https://login.example.com  https://id.example.org/federation/public/signin',
    ])
    const json: string[] = []
    await providersCommand.run(['list', '--json'], ctx(json))
    const [corp] = JSON.parse(json.join('\n')) as Record<string, unknown>[]
    expect(corp).toEqual({
      scheme: 'corp',
      displayName: 'Corporate sign-in',
      type: 'oidc',
      authority: 'https://login.example.com',
      clientId: 'authz-rp',
      hasClientSecret: true,
      scope: 'openid profile email',
      enabled: true,
      emailDomains: ['example.com'],
      linkByVerifiedEmail: false,
      redirectUri: 'https://id.example.org/federation/corp/signin',
      postLogoutRedirectUri: 'https://id.example.org/federation/corp/signout-callback',
      backchannelLogoutUri: 'https://id.example.org/federation/corp/backchannel-logout',
    })
    expect(json.join('\n')).not.toContain('upstream-secret')
  })
})
