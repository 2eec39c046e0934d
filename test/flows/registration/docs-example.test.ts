// docs/registration.md's curl examples, sent as printed (the issuer is the one they name), and
// its printed answer compared with what the server answers, but for the values made at random.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { createRegistrationTestApp, JSON_TYPE } from './harness.js'

const DOC = readFileSync(new URL('../../../docs/registration.md', import.meta.url), 'utf8')
const ISSUER = 'https://id.example.com'

/** Every `--data '…'` of the doc's curl commands, in order. */
const bodies = [...DOC.matchAll(/--data '([^']+)'/g)].map((m) => m[1]!)
/** The answer printed after "The answer is `201 Created`". */
const printed = JSON.parse(/The answer is `201 Created`[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(DOC)![1]!) as Record<string, unknown>

let authz: TestApp
beforeAll(async () => {
  authz = await createRegistrationTestApp({ ISSUER, REGISTRATION_ALLOWED_SCOPES: 'openid profile email offline_access' })
}, 120_000)
afterAll(async () => authz.close())

describe('docs/registration.md', () => {
  it('registers, reads, replaces and deletes as printed', async () => {
    expect(bodies).toHaveLength(2)
    const res = await authz.app.inject({ method: 'POST', url: '/connect/register', headers: JSON_TYPE, payload: bodies[0] })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    const random = ['client_id', 'client_id_issued_at', 'registration_access_token', 'registration_client_uri']
    const without = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !random.includes(k)))
    expect(without(body)).toEqual(without(printed))
    expect(Object.keys(body).sort()).toEqual(Object.keys(printed).sort())
    expect(body.registration_client_uri).toBe(`${ISSUER}/connect/register/${body.client_id}`)

    const url = `/connect/register/${body.client_id}`
    const auth = { authorization: `Bearer ${body.registration_access_token}` }
    expect((await authz.app.inject({ method: 'GET', url, headers: auth })).statusCode).toBe(200)
    const put = await authz.app.inject({
      method: 'PUT',
      url,
      headers: { ...JSON_TYPE, ...auth },
      payload: bodies[1]!.replace('CLIENT_ID', body.client_id),
    })
    expect(put.statusCode).toBe(200)
    expect(put.json().client_name).toBe('My assistant 2')
    const next = { authorization: `Bearer ${put.json().registration_access_token}` }
    expect((await authz.app.inject({ method: 'GET', url, headers: auth })).statusCode).toBe(401)
    expect((await authz.app.inject({ method: 'DELETE', url, headers: next })).statusCode).toBe(204)
  })
})
