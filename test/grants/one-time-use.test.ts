// The one-time-use helper's contract, as every grant with a one-time artefact relies on it:
// consume once and issue; a lost consume or a used artefact revokes the family and answers
// invalid_grant with the grant's own description; the revoking replica knows the JWTs at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { OAuthError } from '../../src/errors.js'
import { createOneTimeUse } from '../../src/grants/one-time-use.js'
import { createPgGrantStore } from '../../src/stores/grants.postgres.js'
import type { TokenResponse } from '../../src/tokens/issuer.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

const T0 = Date.UTC(2026, 0, 1)
const RESPONSE: TokenResponse = { access_token: 'at', token_type: 'Bearer', expires_in: 60, scope: 's' }

function setup() {
  const grants = createPgGrantStore(authz.db)
  const revoked: Array<[string, number]> = []
  const once = createOneTimeUse({ clock: createManualClock(T0), grants, revokedJwts: { add: (jti, exp) => void revoked.push([jti, exp]) } })
  const issueJwt = (familyId: string, jti: string) =>
    grants.issueIntoFamily(
      familyId,
      [{ handle: jti, kind: 'jwt_access_token', clientId: 'c', subjectId: 'u', data: { jti }, createdAt: T0, expiresAt: T0 + 60_000 }],
      T0,
    )
  return { grants, once, revoked, issueJwt }
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: OAuthError) => ({ code: e.code, description: e.description }),
  )

describe('createOneTimeUse', () => {
  it('redeem: consumes, then issues from what consume returned', async () => {
    const { once } = setup()
    const issued: string[] = []
    const res = await once.redeem({
      familyId: 'f-ok',
      consume: async () => 'the artefact',
      usedAgain: 'code already used',
      issue: async (a) => (issued.push(a), RESPONSE),
    })
    expect(res).toBe(RESPONSE)
    expect(issued).toEqual(['the artefact'])
  })

  it('redeem: a lost consume revokes the family, issues nothing and answers invalid_grant', async () => {
    const { once, revoked, issueJwt } = setup()
    expect(await issueJwt('f-lost', 'jti-lost')).toBe(true)
    let issuedAgain = false
    const err = await rejection(
      once.redeem({
        familyId: 'f-lost',
        consume: async () => undefined,
        usedAgain: 'code already used',
        issue: async () => ((issuedAgain = true), RESPONSE),
      }),
    )
    expect(err).toEqual({ code: 'invalid_grant', description: 'code already used' })
    expect(issuedAgain).toBe(false)
    expect(revoked).toEqual([['jti-lost', T0 + 60_000]])
    expect((await authz.db.query('SELECT jti FROM revoked_tokens WHERE jti = $1', ['jti-lost'])).rows).toEqual([{ jti: 'jti-lost' }])
    // Nothing can be issued into the family any more.
    expect(await issueJwt('f-lost', 'jti-late')).toBe(false)
  })

  it('replayed: revokes and answers invalid_grant; revokeFamily alone answers nothing', async () => {
    const { once, revoked, issueJwt } = setup()
    await issueJwt('f-replay', 'jti-replay')
    expect(await rejection(once.replayed('f-replay', 'auth_req_id already used'))).toEqual({
      code: 'invalid_grant',
      description: 'auth_req_id already used',
    })
    expect(revoked.map(([jti]) => jti)).toEqual(['jti-replay'])
    await issueJwt('f-outside', 'jti-outside')
    await expect(once.revokeFamily('f-outside')).resolves.toBeUndefined()
    expect(await issueJwt('f-outside', 'jti-outside-2')).toBe(false)
  })
})
