// A client assertion is used once (RFC 7523 §3 item 7: its jti is recorded until it expires):
// when the same assertion arrives on several token requests at once, exactly one gets a token and
// every other is 401 invalid_client, and the jti stays recorded. Many trials, because a bad
// interleaving shows in only a fraction of them; on PostgreSQL the requests run on connections of
// their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt } from 'jose'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { assertion, assertionSeed, CC, FAILED, HMAC_SECRET, newKey, post, withAssertion, type TestKey } from './assertion-fixtures.js'

const TRIALS = 30
const AT_ONCE = 5

let t: TestApp
let key: TestKey
beforeAll(async () => {
  t = await createTestApp()
  key = await newKey('signer-1')
  await applySeed(t.db, assertionSeed(key, 'http://127.0.0.1:9/jwks')) // the jwks_uri client is not used here
})
afterAll(() => t?.close())

const usedJtis = async (clientId: string, jti: string) =>
  (await t.db.query('SELECT 1 FROM used_jtis WHERE client_id = $1 AND jti = $2', [clientId, jti])).rowCount

async function race(clientId: string, signWith: { privateKey: TestKey['privateKey'] | Uint8Array; kid?: string; alg: string }) {
  const bad: string[] = []
  for (let trial = 0; trial < TRIALS; trial++) {
    const jwt = await assertion(t, signWith, clientId)
    // One source address per trial: the throttle counts the refused replays per address.
    const address = `203.0.113.${trial + 1}`
    const tokenRequest = () => post(t, '/connect/token', { grant_type: CC, scope: 'orders.read', ...withAssertion(jwt) }, address)
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, tokenRequest))

    const winners = answers.filter((r) => r.statusCode === 200)
    if (winners.length !== 1) bad.push(`trial ${trial}: ${winners.length} tokens`)
    for (const r of answers.filter((x) => x.statusCode !== 200)) {
      expect({ status: r.statusCode, body: r.json(), www: r.headers['www-authenticate'] }).toEqual({
        status: 401,
        body: FAILED,
        www: undefined,
      })
    }
    for (const w of winners) expect(w.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' })
    // Stored: the jti, once; the assertion stays refused.
    expect(await usedJtis(clientId, decodeJwt(jwt).jti!)).toBe(1)
    expect((await tokenRequest()).statusCode).toBe(401)
  }
  expect(bad).toEqual([])
}

describe('one client assertion on several token requests at once', () => {
  it(
    `private_key_jwt, ${AT_ONCE} at once, ${TRIALS} trials: exactly one token, the others invalid_client`,
    () => race('signer', key),
    300_000,
  )
  it(
    `client_secret_jwt, ${AT_ONCE} at once, ${TRIALS} trials: exactly one token, the others invalid_client`,
    () => race('hmac', { privateKey: new TextEncoder().encode(HMAC_SECRET), alg: 'HS256' }),
    300_000,
  )
})
