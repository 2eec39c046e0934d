// A request_uri is used up by the code issued from it (RFC 9126 §2.2, §4): when several tabs of
// one signed-in browser bring the same request_uri to the authorization endpoint at once, exactly
// one gets a code and every other goes back to the redirect URI with invalid_request_uri. Many
// trials, because a bad interleaving shows in only a fraction of them; on PostgreSQL the requests
// run on connections of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestUriHandle } from '../../../src/interaction/pushed-authorization.js'
import { createPgPushedRequestStore } from '../../../src/stores/pushed-requests.postgres.js'
import { TEST_ISSUER } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { located, session } from '../authorization-code/harness.js'
import { createParTestApp, JAR_CB, push, RFC7636_VERIFIER, type ParTestApp } from './harness.js'

const TRIALS = 30
const AT_ONCE = 5

let t: ParTestApp
let alice: string
beforeAll(async () => {
  t = await createParTestApp()
  alice = await session(t)
})
afterAll(() => t?.close())

const PLAIN = {
  response_type: 'code',
  redirect_uri: JAR_CB,
  scope: 'openid profile',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
}
const authorize = (requestUri: string) =>
  t.app.inject({
    method: 'GET',
    url: `/connect/authorize?${new URLSearchParams({ client_id: 'jar', request_uri: requestUri })}`,
    headers: { cookie: alice },
  })

/** The parameters a redirect to the client's redirect URI carries. */
function backAtClient(res: Awaited<ReturnType<typeof authorize>>): Record<string, string> {
  expect(res.statusCode).toBe(303)
  const url = located(res)
  expect(`${url.origin}${url.pathname}`).toBe(JAR_CB)
  return Object.fromEntries(url.searchParams)
}

const codesOfJar = async () =>
  Number(
    (await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM persisted_grants WHERE kind = 'authorization_code' AND client_id = 'jar'`))
      .rows[0]!.n,
  )

const redeem = (code: string) =>
  postForm(t.app, '/connect/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: JAR_CB,
    code_verifier: RFC7636_VERIFIER,
    client_id: 'jar',
    client_secret: 'jar-secret',
  })

describe('one request_uri brought to the authorization endpoint by several tabs at once', () => {
  it(`${AT_ONCE} at once, ${TRIALS} trials: exactly one code, the others invalid_request_uri, the request used up`, async () => {
    const bad: string[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const state = `s-${trial}`
      const pushed = await push(t, { ...PLAIN, state })
      expect(pushed.statusCode).toBe(201)
      const uri = pushed.json<{ request_uri: string }>().request_uri
      const codesBefore = await codesOfJar()

      const answers = (await Promise.all(Array.from({ length: AT_ONCE }, () => authorize(uri)))).map(backAtClient)

      const winners = answers.filter((a) => a.code !== undefined)
      if (winners.length !== 1) bad.push(`trial ${trial}: ${winners.length} codes`)
      for (const a of answers.filter((x) => x.code === undefined)) {
        expect(a).toEqual({
          error: 'invalid_request_uri',
          error_description: 'request_uri has expired or has been used',
          state,
          iss: TEST_ISSUER,
        })
      }
      // Stored: one code, and the request used up.
      expect(await codesOfJar()).toBe(codesBefore + winners.length)
      expect((await createPgPushedRequestStore(t.db).find(requestUriHandle(uri)!))?.usedAt).toBe(t.clock.now())
      if (winners.length === 1) {
        expect(winners[0]).toEqual({ code: expect.any(String), state, iss: TEST_ISSUER })
        expect((await redeem(winners[0]!.code!)).statusCode).toBe(200)
      }
      // A tab that comes later is refused the same way.
      expect(backAtClient(await authorize(uri))).toMatchObject({ error: 'invalid_request_uri', state })
      t.clock.advance(1)
    }
    expect(bad).toEqual([])
  }, 300_000)
})
