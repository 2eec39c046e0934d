// A redeemed auth_req_id used again (CIBA Core §7.3, RFC 9700 §4.14.2): invalid_grant, and what it
// issued is revoked, whatever the polling interval; only a poll in flight at the moment of
// redemption (within a grace of at most 2 s, never longer than the interval) gets slow_down.
// And the redemption racing a replay on another replica leaves no token alive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import { REDEMPTION_GRACE_MS } from '../../../src/flows/ciba/grant.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import { captureLogs } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { lastRequestId } from './approve-helper.js'
import { BANK, CIBA, createCibaTestApp, NO_STORE, poll, startCiba, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
const FAST = { client_id: 'fast', client_secret: 'fast-secret' }
beforeAll(async () => {
  authz = await createCibaTestApp()
  await applySeed(authz.db, {
    clients: [
      {
        clientId: 'fast',
        secrets: [{ value: 'fast-secret' }],
        allowedGrantTypes: [CIBA],
        allowedScopes: ['openid', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        pollingInterval: 1,
      },
    ],
  })
})
afterAll(() => authz.close())

const SCOPE = 'openid orders.read offline_access'

/** A CIBA request approved by alice (through the store: the pages have their own tests). */
async function approved(client = BANK): Promise<string> {
  const res = await startCiba(authz, { ...client, scope: SCOPE, login_hint: 'alice' })
  expect(res.statusCode).toBe(200)
  const decided = await createPgCibaRequestStore(authz.db).decide(
    await lastRequestId(authz),
    { status: 'approved', approvedScopes: SCOPE.split(' '), authTime: authz.clock.now() },
    authz.clock.now(),
  )
  expect(decided?.status).toBe('approved')
  return res.json().auth_req_id as string
}

async function redeem(authReqId: string, client = BANK) {
  const res = await poll(authz, authReqId, client)
  expect(res.statusCode).toBe(200)
  return res.json<{ access_token: string; refresh_token: string }>()
}

const introspect = (app: CibaTestApp['app'], token: string, who: { client_id: string; client_secret: string }) =>
  postForm(app, '/connect/introspect', { ...who, token })
const API = { client_id: 'orders-api', client_secret: 'api-secret' }

/** Whether any of the tokens still works: the access token for the API, the refresh token for its client. */
async function alive(app: CibaTestApp['app'], tokens: { access_token: string; refresh_token: string }, client = BANK) {
  const access = (await introspect(app, tokens.access_token, API)).json().active
  const refresh = (await introspect(app, tokens.refresh_token, client)).json().active
  return { access, refresh }
}

async function expectError(authReqId: string, error: string, description: string, client = BANK) {
  const res = await poll(authz, authReqId, client)
  expect(res.headers).toMatchObject(NO_STORE)
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: { error, error_description: description } })
}

describe('a redeemed auth_req_id used again', () => {
  it('inside the polling interval: invalid_grant, and everything it issued is revoked', async () => {
    const authReqId = await approved()
    const tokens = await redeem(authReqId)
    authz.clock.advance(3) // past the grace, well inside the 5 s interval
    await expectError(authReqId, 'invalid_grant', 'auth_req_id already used')
    expect(await alive(authz.app, tokens)).toEqual({ access: false, refresh: false })
    // Every replay after that is refused the same way, however fast they come; none slows down.
    for (let i = 0; i < 3; i++) await expectError(authReqId, 'invalid_grant', 'auth_req_id already used')
  })

  it('a poll in flight at the redemption gets slow_down and revokes nothing, until the grace ends (clock-driven)', async () => {
    const authReqId = await approved()
    const tokens = await redeem(authReqId)
    await expectError(authReqId, 'slow_down', 'poll at most every 5 seconds')
    authz.clock.advance((REDEMPTION_GRACE_MS - 1) / 1000)
    await expectError(authReqId, 'slow_down', 'poll at most every 5 seconds')
    expect(await alive(authz.app, tokens)).toEqual({ access: true, refresh: true })
    authz.clock.advance(0.001)
    await expectError(authReqId, 'invalid_grant', 'auth_req_id already used')
    expect(await alive(authz.app, tokens)).toEqual({ access: false, refresh: false })
  })

  it('the grace never outlasts the polling interval (1 s here)', async () => {
    const authReqId = await approved(FAST)
    const tokens = await redeem(authReqId, FAST)
    await expectError(authReqId, 'slow_down', 'poll at most every 1 seconds', FAST)
    authz.clock.advance(1)
    await expectError(authReqId, 'invalid_grant', 'auth_req_id already used', FAST)
    expect(await alive(authz.app, tokens, FAST)).toEqual({ access: false, refresh: false })
  })
})

describe('redemption racing a replay on another replica', () => {
  it('30 trials: wherever the auth_req_id was used twice, nothing it issued survives', async () => {
    // Replica B runs 10 s ahead (its polls are past the interval and the grace), on the same database.
    const { logger } = captureLogs(authz.config)
    const b = await buildApp({
      config: authz.config,
      db: authz.db,
      clock: { now: () => authz.clock.now() + 10_000 },
      logger,
      cibaNotifier: { notify: () => {}, drain: async () => {} },
    })
    await b.ready()
    const survivors: string[] = []
    let revokedTrials = 0
    try {
      for (let trial = 0; trial < 30; trial++) {
        authz.clock.advance(30)
        const authReqId = await approved()
        const pollAt = (app: typeof b) => postForm(app, '/connect/token', { ...BANK, grant_type: CIBA, auth_req_id: authReqId })
        const replay = new Promise((r) => setTimeout(r, trial % 5)).then(() => pollAt(b))
        const [onA, onB] = await Promise.all([pollAt(authz.app), replay])
        const answers = [
          { app: authz.app, res: onA },
          { app: b, res: onB },
        ]
        const winner = answers.find((x) => x.res.statusCode === 200)
        const revoker = answers.find((x) => x.res.json().error_description === 'auth_req_id already used')
        for (const x of answers) {
          if (x !== winner) expect(x.res.statusCode).toBe(400)
        }
        if (!revoker) continue // the replay was the redemption and the other poll was in flight: nothing to revoke
        revokedTrials++
        // The replica that revoked refuses the family's JWTs at once; refresh tokens are gone from the database.
        if (winner) {
          const state = await alive(revoker.app, winner.res.json())
          if (state.access !== false || state.refresh !== false) survivors.push(`trial ${trial}: ${JSON.stringify(state)}`)
        }
      }
    } finally {
      await b.close()
    }
    expect(survivors).toEqual([])
    expect(revokedTrials).toBeGreaterThan(0)
  }, 300_000)
})
