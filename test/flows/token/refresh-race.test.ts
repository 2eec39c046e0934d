// Refresh token reuse detection under concurrency (RFC 9700 §4.14.2, RFC 7009 §2.1): when two
// refreshes of one token race, or a refresh races a revocation, the family is revoked and no token
// that any request received survives it: not the winner's new refresh token, not its access token.
// Many trials, because a bad interleaving shows in only a fraction of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createScopeResolver } from '../../../src/grants/scopes.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { createPgGrantStore } from '../../../src/stores/grants.postgres.js'
import { createPgResourceStore } from '../../../src/stores/resources.postgres.js'
import { createPgUserStore } from '../../../src/stores/users.postgres.js'
import { createTokenIssuer } from '../../../src/tokens/issuer.js'
import { createTestApp, type TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'

const TRIALS = 30
const CLIENTS = {
  app: { id: 'app', secret: 'app-secret' }, // JWT access tokens
  ref: { id: 'ref-app', secret: 'ref-secret' }, // reference access tokens
  // A public client whose seed asks for reUse: it rotates anyway (RFC 9700 §4.14.2), so a race of
  // its refreshes must end like any other rotating client's.
  spa: { id: 'spa', secret: undefined },
} as const
interface Who {
  id: string
  /** Undefined: a public client, which names itself with client_id (and cannot introspect). */
  secret: string | undefined
}

let authz: TestApp
let firstRefreshToken: (who: Who) => Promise<string>
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['offline_access'],
    clients: [
      ...[CLIENTS.app, CLIENTS.ref].map((c) => ({
        clientId: c.id,
        secrets: [{ value: c.secret }],
        allowedGrantTypes: ['refresh_token'],
        allowedScopes: ['orders.read'],
        allowOfflineAccess: true,
        accessTokenType: c === CLIENTS.ref ? ('reference' as const) : ('jwt' as const),
      })),
      {
        clientId: CLIENTS.spa.id,
        requireClientSecret: false,
        refreshTokenUsage: 'reUse' as const,
        allowedGrantTypes: ['refresh_token'],
        allowedScopes: ['orders.read'],
        allowOfflineAccess: true,
      },
    ],
    users: [{ subjectId: 'u-1', username: 'alice', claims: {} }],
  })
  const resources = createPgResourceStore(authz.db)
  const users = createPgUserStore(authz.db)
  const clients = createPgClientStore(authz.db)
  const issuer = createTokenIssuer({
    config: authz.config,
    clock: authz.clock,
    keys: authz.app.authz.keys,
    grants: createPgGrantStore(authz.db),
    users,
    resources,
  })
  const scopes = createScopeResolver({ resources })
  firstRefreshToken = async (who) => {
    const client = (await clients.findById(who.id))!
    const granted = await scopes.resolve(client, 'orders.read offline_access', { allowIdentity: true })
    const res = await issuer.issue({ client, subjectId: 'u-1', granted, refreshToken: true })
    return res.refresh_token!
  }
})
afterAll(() => authz.close())

const post = (url: string, who: Who, params: Record<string, string>) =>
  who.secret === undefined
    ? postForm(authz.app, url, { ...params, client_id: who.id })
    : postFormBasic(authz.app, url, params, who.id, who.secret)
const refresh = (who: Who, token: string) => post('/connect/token', who, { grant_type: 'refresh_token', refresh_token: token })
const introspect = (who: Who, token: string) => post('/connect/introspect', who, { token })
const API = { id: 'orders-api', secret: 'orders-secret' }

interface Received {
  access: string[]
  refresh: string[]
}

function collect(responses: Array<{ statusCode: number; json(): Record<string, string> }>, into: Received) {
  for (const r of responses) {
    if (r.statusCode !== 200) continue
    into.access.push(r.json().access_token!)
    if (r.json().refresh_token !== undefined) into.refresh.push(r.json().refresh_token!)
  }
}

/** Every token that is still usable: an access token an API or its client sees as active, a refresh token that refreshes. */
async function survivors(who: Who, got: Received): Promise<string[]> {
  const alive: string[] = []
  for (const token of got.access) {
    const seen = [(await introspect(API, token)).json().active]
    if (who.secret !== undefined) seen.push((await introspect(who, token)).json().active)
    if (seen.some((active) => active !== false)) alive.push(`access token active: API ${seen[0]}, client ${seen[1]}`)
  }
  for (const token of got.refresh) {
    const active = who.secret === undefined ? false : (await introspect(who, token)).json().active
    const res = await refresh(who, token)
    if (active !== false || res.statusCode !== 400 || res.json().error !== 'invalid_grant') {
      alive.push(`refresh token active: ${active}, refreshed: ${res.statusCode}`)
    }
  }
  return alive
}

async function concurrentRefreshes(who: Who, n: number) {
  const alive: string[] = []
  for (let trial = 0; trial < TRIALS; trial++) {
    const token = await firstRefreshToken(who)
    const responses = await Promise.all(Array.from({ length: n }, () => refresh(who, token)))
    // Exactly one consume succeeds; every other request is a reuse of a used token.
    expect(responses.filter((r) => r.statusCode === 200).length).toBeLessThanOrEqual(1)
    const refused = responses.filter((r) => r.statusCode !== 200)
    expect(refused.length).toBeGreaterThanOrEqual(n - 1)
    for (const r of refused) expect({ status: r.statusCode, error: r.json().error }).toEqual({ status: 400, error: 'invalid_grant' })
    const got: Received = { access: [], refresh: [token] }
    collect(responses, got)
    alive.push(...(await survivors(who, got)).map((s) => `trial ${trial}: ${s}`))
  }
  expect(alive).toEqual([])
}

describe('concurrent refreshes of one refresh token revoke the whole family', () => {
  it(`2 at once, ${TRIALS} trials, JWT access tokens: zero survivors`, () => concurrentRefreshes(CLIENTS.app, 2), 300_000)
  it(`2 at once, ${TRIALS} trials, reference access tokens: zero survivors`, () => concurrentRefreshes(CLIENTS.ref, 2), 300_000)
  it(`20 at once, ${TRIALS} trials: zero survivors`, () => concurrentRefreshes(CLIENTS.app, 20), 600_000)
  it(`2 at once, ${TRIALS} trials, a public client configured reUse: zero survivors`, () => concurrentRefreshes(CLIENTS.spa, 2), 300_000)
})

describe('a refresh racing an RFC 7009 revocation of its token', () => {
  for (const who of [CLIENTS.app, CLIENTS.ref]) {
    it(`${TRIALS} trials, ${who.id}: revocation answers 200 and nothing the refresh received survives`, async () => {
      const alive: string[] = []
      for (let trial = 0; trial < TRIALS; trial++) {
        const token = await firstRefreshToken(who)
        // The revocation starts 0 to 9 ms after the refresh, so that it lands at every step of it.
        const revoke = new Promise((r) => setTimeout(r, trial % 10)).then(() => post('/connect/revocation', who, { token }))
        const [res, rev] = await Promise.all([refresh(who, token), revoke])
        expect(rev.statusCode).toBe(200)
        if (res.statusCode !== 200)
          expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_grant' })
        const got: Received = { access: [], refresh: [token] }
        collect([res], got)
        alive.push(...(await survivors(who, got)).map((s) => `trial ${trial}: ${s}`))
      }
      expect(alive).toEqual([])
    }, 300_000)
  }
})
