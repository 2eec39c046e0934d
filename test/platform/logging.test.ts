// Secrets, tokens and passwords never reach the logs, whatever the level.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDACTED_FIELDS, redactUrl } from '../../src/http/logger.js'
import { createTestApp, FORM, type TestApp } from '../helpers/app.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp({ env: { LOG_LEVEL: 'trace' } })
})
afterAll(() => authz.close())

const secret = (field: string) => `SECRET-${field}-8f3a1c`

describe('log redaction', () => {
  it('never writes a credential sent in the body, the query string or the headers', async () => {
    const body = new URLSearchParams(Object.fromEntries(REDACTED_FIELDS.map((f) => [f, secret(f)])))
    body.set('grant_type', 'client_credentials')
    body.set('client_id', 'nobody')
    const headers = {
      ...FORM,
      authorization: `Basic ${Buffer.from(`nobody:${secret('basic')}`).toString('base64')}`,
      cookie: `authz_session=${secret('cookie')}`,
    }
    const urls = ['/connect/token', '/connect/introspect', '/connect/revocation', '/no-such-route']
    for (const url of urls) {
      const res = await authz.app.inject({ method: 'POST', url, headers, payload: body.toString() })
      expect(res.statusCode).toBeGreaterThanOrEqual(400)
      expect(res.statusCode).toBeLessThan(500)
      const q = await authz.app.inject({ method: 'GET', url: `${url}?client_secret=${secret('query')}&token=${secret('query-token')}` })
      expect(q.statusCode).toBeLessThan(500)
    }
    const output = authz.logs.join('\n')
    expect(authz.logs.length).toBeGreaterThan(urls.length * 2) // trace level: the requests were logged
    expect(output).toContain('"reqId"')
    for (const field of [...REDACTED_FIELDS, 'basic', 'cookie', 'query', 'query-token']) {
      expect(output).not.toContain(secret(field))
    }
    expect(output).not.toContain(Buffer.from(`nobody:${secret('basic')}`).toString('base64'))
  })

  it('redacts a credential inside a URL carried as a parameter (the sign-in page return_to), encoded or not', () => {
    expect(redactUrl('/account/sign-in?return_to=%2Fdevice%3Fuser_code%3DBCDF-GHJK&x=1')).toBe(
      '/account/sign-in?return_to=%2Fdevice%3Fuser_code%3D%5Bredacted%5D&x=1',
    )
    expect(redactUrl('/account/sign-in?return_to=/device?user_code=BCDF-GHJK')).toBe(
      '/account/sign-in?return_to=%2Fdevice%3Fuser_code%3D%5Bredacted%5D',
    )
    // Nothing sensitive inside: logged exactly as sent.
    expect(redactUrl('/account/sign-in?return_to=%2Fconnect%2Fauthorize%3Fclient_id%3Dweb')).toBe(
      '/account/sign-in?return_to=%2Fconnect%2Fauthorize%3Fclient_id%3Dweb',
    )
    expect(redactUrl('/x?a=%E0%A4%A%3F')).toBe('/x?a=%E0%A4%A%3F')
  })
})
