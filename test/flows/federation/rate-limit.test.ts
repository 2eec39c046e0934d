// Starting a sign-in upstream stores a request, so it is limited per source address like the
// sign-in form (RATE_LIMIT_SIGN_IN): past the limit, a 429 page and nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browser, createFederation, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation({}, { RATE_LIMIT_SIGN_IN: '2' })
})
afterAll(() => f?.close())

describe('/federation/{scheme}/challenge', () => {
  it('answers 429 past RATE_LIMIT_SIGN_IN per minute, storing nothing', async () => {
    const b = browser(f)
    expect((await b.get('/federation/corp/challenge')).statusCode).toBe(303)
    expect((await b.get('/federation/corp/challenge')).statusCode).toBe(303)
    const third = await b.get('/federation/corp/challenge')
    expect(third.statusCode).toBe(429)
    expect(third.body).toContain('Too many attempts')
    const { rows } = await f.authz.db.query('SELECT count(*)::int AS n FROM federation_requests')
    expect(rows).toEqual([{ n: 2 }])
  })
})
