// CIBA user_code guessing is throttled per client and user (RFC 6749 §10.10, RFC 8628 §5.1).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { BANK, createCibaTestApp, startCiba, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { USER_CODE_FAILURE_LIMIT: '3', USER_CODE_BLOCK_DURATION: '60' } })
})
afterAll(() => authz.close())
beforeEach(async () => {
  await authz.db.query('DELETE FROM ciba_requests') // the per-user pending limit would refuse later requests
})

const PLAIN = { client_id: 'plain', client_secret: 'plain-secret' }
const bob = (client: Record<string, string>, code: string) =>
  startCiba(authz, { ...client, scope: 'openid', login_hint: 'bob', user_code: code })
const WRONG = { error: 'invalid_user_code', error_description: 'the user_code is wrong' }
const BLOCKED = {
  error: 'invalid_user_code',
  error_description: 'too many wrong user_code values from this client for this user, retry later',
}
const answer = async (p: ReturnType<typeof bob>) => {
  const res = await p
  return res.statusCode === 200 ? 200 : { status: res.statusCode, body: res.json() }
}

describe('CIBA user_code throttling', () => {
  it('refuses one client for one user after the limit, for a growing period, and leaves other clients alone', async () => {
    for (let i = 0; i < 3; i++) expect(await answer(bob(BANK, `000${i}`))).toEqual({ status: 400, body: WRONG })
    expect(await answer(bob(BANK, '4711'))).toEqual({ status: 400, body: BLOCKED })
    expect(await answer(bob(PLAIN, '4711'))).toBe(200)
    authz.clock.advance(59)
    expect(await answer(bob(BANK, '4711'))).toEqual({ status: 400, body: BLOCKED })
    authz.clock.advance(1)
    for (let i = 0; i < 3; i++) expect(await answer(bob(BANK, `000${i}`))).toEqual({ status: 400, body: WRONG })
    authz.clock.advance(60)
    expect(await answer(bob(BANK, '4711'))).toEqual({ status: 400, body: BLOCKED })
    authz.clock.advance(60)
    await authz.db.query('DELETE FROM ciba_requests')
    expect(await answer(bob(BANK, '4711'))).toBe(200)
  })

  it('a right code forgets the wrong ones', async () => {
    for (let round = 0; round < 3; round++) {
      await authz.db.query('DELETE FROM ciba_requests')
      for (let i = 0; i < 2; i++) expect(await answer(bob(PLAIN, '1234'))).toEqual({ status: 400, body: WRONG })
      expect(await answer(bob(PLAIN, '4711'))).toBe(200)
    }
  })

  it('logs each wrong code with client and user, never the code', async () => {
    authz.logs.length = 0
    await bob(PLAIN, '98765')
    const lines = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'user_code rejected')
    expect(lines).toEqual([expect.objectContaining({ level: 30, client_id: 'plain', subject: 'u-bob', reason: 'wrong_code' })])
    expect(authz.logs.join('\n')).not.toContain('98765')
  })
})
