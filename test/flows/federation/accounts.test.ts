// linkByVerifiedEmail: an upstream identity whose email the upstream says is verified links to the
// one local user with that email (the app sees that user's sub), and nothing else does. Here the
// provider's client secret is encrypted at rest (KEY_ENCRYPTION_SECRET), as an operator sets it.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browser, createFederation, located, redeem, signInThroughCorp, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation({ linkByVerifiedEmail: true }, { KEY_ENCRYPTION_SECRET: 'a-key-encryption-secret-for-this-test' })
})
afterAll(() => f?.close())

async function subOf(username: string, password: string) {
  const { back, verifier } = await signInThroughCorp(browser(f), {}, username, password)
  const res = await redeem(f, located(back).searchParams.get('code')!, verifier)
  expect(res.statusCode).toBe(200)
  return decodeJwt(res.json().id_token as string).sub
}

const linked = () =>
  f.authz.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.event === 'federation.linked')
    .map((l) => [l.idp, l.reason])

describe('linkByVerifiedEmail', () => {
  it('stores the secret encrypted, and signs in with it', async () => {
    const { rows } = await f.authz.db.query(`SELECT client_secret_encrypted FROM identity_providers WHERE scheme = 'corp'`)
    expect(rows).toEqual([{ client_secret_encrypted: true }])
  })

  it('links a verified email to the one local user who has it', async () => {
    expect(await subOf('carol', 'carol-up-pw')).toBe('u-carol')
    expect(await subOf('carol', 'carol-up-pw')).toBe('u-carol')
    expect(linked()).toEqual([['corp', 'linked']])
    // The local user's own claims stay as they are: the link does not manage them.
    const { rows } = await f.authz.db.query(`SELECT claims FROM users WHERE subject_id = 'u-carol'`)
    expect(rows).toEqual([{ claims: { name: 'Carol Local', email: 'carol@local.example' } }])
  })

  it('refuses a linked user who is disabled: access_denied to the app, no session', async () => {
    const sessions = async () => (await f.authz.db.query(`SELECT count(*)::int AS n FROM user_sessions WHERE subject_id = 'u-carol'`)).rows
    const before = await sessions()
    await f.authz.db.query(`UPDATE users SET enabled = false WHERE subject_id = 'u-carol'`)
    const { back } = await signInThroughCorp(browser(f), {}, 'carol', 'carol-up-pw')
    expect(Object.fromEntries(located(back).searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'the user may not sign in',
      state: 'app-state',
      iss: 'https://authz.test',
    })
    expect(await sessions()).toEqual(before)
    await f.authz.db.query(`UPDATE users SET enabled = true WHERE subject_id = 'u-carol'`)
  })

  it('creates a user when the email is not verified', async () => {
    await f.upstream.db.query(`UPDATE users SET claims = claims || '{"email_verified": false}' WHERE username = 'alice'`)
    await f.authz.db.query(`UPDATE users SET claims = claims || '{"email": "alice@example.com"}' WHERE subject_id = 'u-carol'`)
    const sub = await subOf('alice', 'alice-up-pw')
    expect(sub).not.toBe('u-carol')
    expect(linked()).toEqual([
      ['corp', 'linked'],
      ['corp', 'created'],
    ])
  })
})
