// The CIBA approval sign-in goes through the one PasswordCheck: wrong passwords lock the account.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGN_IN_FAILED } from '../../../src/pages/sign-in.js'
import { lastRequestId, signIn } from './approve-helper.js'
import { BANK, createCibaTestApp, startCiba, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { LOCKOUT_THRESHOLD: '3', LOCKOUT_DURATION: '300' } })
})
afterAll(() => authz.close())

describe('CIBA approval sign-in lockout', () => {
  it('after 3 wrong passwords the right one is refused with the same page until the lock ends', async () => {
    expect((await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice' })).statusCode).toBe(200)
    const id = await lastRequestId(authz)
    for (let i = 0; i < 3; i++) {
      const { res } = await signIn(authz, id, 'alice', `wrong-${i}`)
      expect(res.statusCode).toBe(401)
      expect(res.body).toContain(`<div class="alert" role="alert"><p>${SIGN_IN_FAILED}</p></div>`)
    }
    const locked = await signIn(authz, id, 'alice', 'alice-pw')
    const wrong = await signIn(authz, id, 'alice', 'wrong-again')
    // The same answer as a wrong password: nothing tells a locked account apart.
    const page = (r: typeof wrong) => ({ status: r.res.statusCode, body: r.res.body.replace(/name="csrf" value="[^"]+"/, '') })
    expect(page(locked)).toEqual(page(wrong))
    expect(locked.res.statusCode).toBe(401)
    const failures = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'sign-in failed')
    expect(failures.at(-2)).toMatchObject({ username: 'alice', client_id: 'bank', address: '127.0.0.1', reason: 'locked' })
    authz.clock.advance(300) // the lock is over (and the CIBA request expired: start another)
    expect((await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice' })).statusCode).toBe(200)
    expect((await signIn(authz, await lastRequestId(authz), 'alice', 'alice-pw')).res.statusCode).toBe(303)
  })
})
