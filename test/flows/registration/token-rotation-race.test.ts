// An update rotates the registration access token (RFC 7592 §2.2): when several updates with the
// same token race, exactly one succeeds and hands out the new token; every other is 401
// invalid_token (RFC 6750 §3.1), the old token is dead afterwards, and the stored registration is
// the winner's. Many trials, because a bad interleaving shows in only a fraction of them; on
// PostgreSQL the requests run on connections of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import type { TestApp } from '../../helpers/app.js'
import { bearer, createRegistrationTestApp, JSON_TYPE, pathOf, PUBLIC_CLIENT } from './harness.js'

const TRIALS = 30
const AT_ONCE = 5

let authz: TestApp
beforeAll(async () => {
  authz = await createRegistrationTestApp()
})
afterAll(() => authz?.close())

/** A new registration, each from an address of its own (registrations are rate-limited per address). */
async function registered(trial: number): Promise<{ clientId: string; url: string; token: string }> {
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/register',
    remoteAddress: `192.0.2.${trial + 1}`,
    headers: JSON_TYPE,
    payload: JSON.stringify(PUBLIC_CLIENT),
  })
  expect(res.statusCode).toBe(201)
  const body = res.json()
  return { clientId: body.client_id, url: pathOf(body.registration_client_uri), token: body.registration_access_token }
}

const update = (url: string, token: string, body: Record<string, unknown>) =>
  authz.app.inject({ method: 'PUT', url, headers: { ...JSON_TYPE, ...bearer(token) }, payload: JSON.stringify(body) })
const read = (url: string, token: string) => authz.app.inject({ method: 'GET', url, headers: bearer(token) })

const INVALID_TOKEN = {
  status: 401,
  www: 'Bearer realm="https://authz.test", error="invalid_token"',
  body: { error: 'invalid_token', error_description: 'the registration access token is invalid' },
}
const refusal = (res: Awaited<ReturnType<typeof read>>) => ({
  status: res.statusCode,
  www: res.headers['www-authenticate'],
  body: res.json(),
})

describe('concurrent updates with one registration access token', () => {
  it(`${AT_ONCE} at once, ${TRIALS} trials: exactly one rotates it, the others are 401 invalid_token`, async () => {
    const bad: string[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const { clientId, url, token } = await registered(trial)
      const names = Array.from({ length: AT_ONCE }, (_, i) => `Assistant ${trial}.${i}`)
      const answers = await Promise.all(
        names.map((name) => update(url, token, { ...PUBLIC_CLIENT, client_id: clientId, client_name: name })),
      )

      const winners = answers.filter((r) => r.statusCode === 200)
      if (winners.length !== 1) bad.push(`trial ${trial}: ${winners.length} updates succeeded`)
      for (const r of answers.filter((x) => x.statusCode !== 200)) expect(refusal(r)).toEqual(INVALID_TOKEN)
      if (winners.length !== 1) continue

      const won = winners[0]!.json()
      const name = won.client_name as string
      expect(names).toContain(name)
      expect(won.registration_access_token).not.toBe(token)
      // The old token is dead; the new one reads the winner's registration, and the client is the winner's.
      expect(refusal(await read(url, token))).toEqual(INVALID_TOKEN)
      const now = await read(url, won.registration_access_token)
      expect(now.statusCode).toBe(200)
      expect(now.json()).toMatchObject({ client_id: clientId, client_name: name })
      expect((await createPgClientStore(authz.db).findById(clientId))?.clientName).toBe(name)
    }
    expect(bad).toEqual([])
  }, 300_000)
})
