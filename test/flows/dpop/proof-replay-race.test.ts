// A DPoP proof is used once (RFC 9449 §11.1: its jti is recorded for as long as its iat is
// accepted): when the same proof arrives on several token requests at once, exactly one gets a
// token and every other is invalid_dpop_proof, and the jti stays recorded. Many trials, because a
// bad interleaving shows in only a fraction of them; on PostgreSQL the requests run on connections
// of their own.
import { createHash } from 'node:crypto'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { dpopKey, proof, type DPoPKey } from './proof.js'

const TRIALS = 30
const AT_ONCE = 5

let authz: TestApp
let key: DPoPKey
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'api-secret' }] }],
    clients: [
      { clientId: 'svc', secrets: [{ value: 'svc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
    ],
  })
  key = await dpopKey()
})
afterAll(() => authz?.close())

const tokenWith = (dpop: string) =>
  postForm(
    authz.app,
    '/connect/token',
    { grant_type: 'client_credentials', scope: 'orders.read' },
    { authorization: basic('svc', 'svc-secret'), dpop },
  )

/** Whether the proof's jti is recorded for its key (as src/tokens/dpop.ts keeps it: hashed). */
const recorded = async (dpop: string) =>
  (
    await authz.db.query('SELECT 1 FROM used_jtis WHERE client_id = $1 AND jti = $2', [
      `dpop:${key.jkt}`,
      createHash('sha256')
        .update(String(decodeJwt(dpop).jti))
        .digest('base64url'),
    ])
  ).rowCount

const USED = { status: 400, cache: 'no-store', body: { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was used before' } }
const refusal = (r: Awaited<ReturnType<typeof tokenWith>>) => ({ status: r.statusCode, cache: r.headers['cache-control'], body: r.json() })

describe('one DPoP proof on several token requests at once', () => {
  it(`${AT_ONCE} at once, ${TRIALS} trials: exactly one token, the others invalid_dpop_proof`, async () => {
    const bad: string[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const dpop = await proof(authz, key)
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => tokenWith(dpop)))

      const winners = answers.filter((r) => r.statusCode === 200)
      if (winners.length !== 1) bad.push(`trial ${trial}: ${winners.length} tokens`)
      for (const r of answers.filter((x) => x.statusCode !== 200)) expect(refusal(r)).toEqual(USED)
      for (const w of winners) {
        expect(w.json()).toMatchObject({ token_type: 'DPoP', scope: 'orders.read' })
        expect(decodeJwt(w.json().access_token).cnf).toEqual({ jkt: key.jkt })
      }
      // Stored: the jti, once; the proof stays refused.
      expect(await recorded(dpop)).toBe(1)
      expect(refusal(await tokenWith(dpop))).toEqual(USED)
      authz.clock.advance(1)
    }
    expect(bad).toEqual([])
  }, 300_000)
})
