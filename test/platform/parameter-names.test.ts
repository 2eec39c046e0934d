// Parameter names are the request's own, never the server's (RFC 6749 §3.2, ARCHITECTURE.md "Wire rules").
// A name that an object inherits from Object.prototype (constructor, toString, __proto__,
// hasOwnProperty, valueOf) is an unknown parameter like any other: with a control character it is
// invalid_request, over-long it is too long, otherwise it is ignored. The attack: such a name used
// to be looked up as if it were one of ours, so that a control character in it answered a 400
// whose JSON had no `error` (a function serialized to nothing) or `"error":{}`, an over-long
// value escaped every length limit, and the logout page repeated the name the request made up
// (RFC 6749 §5.2: never echo input). Likewise binding_message's own error code (CIBA Core §13)
// belongs to the CIBA endpoint alone: elsewhere it is an unknown parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORM } from '../helpers/app.js'
import { BANK, createCibaTestApp, type CibaTestApp } from '../flows/ciba/harness.js'
import { expectOAuthError } from '../helpers/error-shape.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { LOG_LEVEL: 'warn', CLIENT_AUTH_FAILURE_LIMIT: '1000' } })
})
afterAll(() => authz.close())

/** Names every plain object inherits from Object.prototype. */
const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']
const LONG = 'y'.repeat(2_001) // over every limit an unknown parameter has (100 at the OAuth endpoints, 2000 at logout)

const invalid = (description: string) => ({ error: 'invalid_request', error_description: description })
const CONTROL = invalid('a parameter contains control characters')
const TOO_LONG = invalid('a parameter is too long')

interface Endpoint {
  url: string
  /** A form that this endpoint refuses with 400, and that refusal. */
  base: string
  refused: Record<string, string>
  headers?: Record<string, string>
  /** What an over-long unknown parameter gets; `refused` where the endpoint has no length limits. */
  tooLong: Record<string, string>
  /** What binding_message with a control character gets here. */
  bindingMessage: Record<string, string>
}

const raw = (params: Record<string, string>) => new URLSearchParams(params).toString()
const CONTROL_BINDING_MESSAGE = invalid('binding_message contains control characters')

const OAUTH_ENDPOINTS: Endpoint[] = [
  {
    url: '/connect/token',
    base: raw({ client_id: 'cc-only', client_secret: 'cc-secret', grant_type: 'nope' }),
    refused: { error: 'unsupported_grant_type' },
    tooLong: TOO_LONG,
    bindingMessage: CONTROL_BINDING_MESSAGE,
  },
  {
    url: '/connect/introspect',
    base: raw({ client_id: 'orders-api', client_secret: 'api-secret' }),
    refused: invalid('token is required'),
    tooLong: TOO_LONG,
    bindingMessage: CONTROL_BINDING_MESSAGE,
  },
  {
    url: '/connect/revocation',
    base: raw({ client_id: 'cc-only', client_secret: 'cc-secret' }),
    refused: invalid('token is required'),
    tooLong: TOO_LONG,
    bindingMessage: CONTROL_BINDING_MESSAGE,
  },
  {
    url: '/connect/ciba',
    base: raw({ ...BANK, scope: 'openid' }),
    refused: invalid('exactly one of login_hint, id_token_hint and login_hint_token is required'),
    tooLong: TOO_LONG,
    // CIBA Core §13: here, and only here, an unacceptable binding_message has its own code.
    bindingMessage: { error: 'invalid_binding_message', error_description: 'binding_message contains control characters' },
  },
  {
    url: '/connect/deviceauthorization',
    base: raw({ client_id: 'cc-only', client_secret: 'cc-secret' }),
    refused: { error: 'unauthorized_client', error_description: 'the client may not use the device authorization grant' },
    tooLong: TOO_LONG,
    bindingMessage: CONTROL_BINDING_MESSAGE,
  },
  {
    // Userinfo takes one parameter (access_token, RFC 6750 §2.2) and no length limits (a JWT is long).
    url: '/connect/userinfo',
    base: raw({ access_token: 'x' }),
    headers: { authorization: 'Bearer x' },
    refused: invalid('present the access token once, as a Bearer token'),
    tooLong: invalid('present the access token once, as a Bearer token'),
    bindingMessage: CONTROL_BINDING_MESSAGE,
  },
]

async function post(url: string, payload: string, headers: Record<string, string> = {}) {
  return authz.app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload })
}

/** The answer as one value, so that a failure names the endpoint and the parameter. */
const answer = (where: string, res: { statusCode: number; json(): unknown }) => ({ where, status: res.statusCode, body: res.json() })

describe('parameter names inherited from Object.prototype', () => {
  it('are unknown parameters at every OAuth endpoint: controls refused, over-long refused, otherwise ignored', async () => {
    for (const e of OAUTH_ENDPOINTS) {
      const baseline = await post(e.url, e.base, e.headers)
      expect(answer(e.url, baseline)).toEqual({ where: e.url, status: 400, body: e.refused })
      for (const name of INHERITED) {
        for (const [value, expected] of [
          ['a%01b', CONTROL],
          ['%00', CONTROL],
          [LONG, e.tooLong],
          ['x', e.refused],
        ] as const) {
          const where = `${e.url} ${name}=${value.slice(0, 5)}`
          const res = await post(e.url, `${e.base}&${name}=${value}`, e.headers)
          expect(answer(where, res)).toEqual({ where, status: 400, body: expected })
          expectOAuthError(res, where)
        }
      }
    }
  })

  it('are refused in a query string too, with invalid_request', async () => {
    for (const name of INHERITED) {
      for (const url of [`/.well-known/openid-configuration?${name}=%01`, `/connect/userinfo?${name}=a%7f`]) {
        const res = await authz.app.inject({ method: 'GET', url })
        expect(answer(url, res)).toEqual({ where: url, status: 400, body: CONTROL })
        expectOAuthError(res, url)
      }
    }
  })

  it('are unknown parameters at the logout endpoint: its page never repeats them', async () => {
    for (const name of INHERITED) {
      for (const [value, description] of [
        ['a%01b', 'a parameter contains control characters'],
        [LONG, 'a parameter is too long'],
      ] as const) {
        const form = await post('/connect/endsession', `${name}=${value}`)
        const query = await authz.app.inject({ method: 'GET', url: `/connect/endsession?${name}=${value}` })
        for (const [how, res] of [
          ['POST', form],
          ['GET', query],
        ] as const) {
          const where = `endsession ${how} ${name}=${value.slice(0, 5)}`
          expect({ where, status: res.statusCode, type: res.headers['content-type'] }).toEqual({
            where,
            status: 400,
            type: 'text/html; charset=utf-8',
          })
          expect(res.body, where).toContain(`<p>Details: ${description}.</p>`)
          expect(res.body, where).not.toContain(name)
        }
      }
    }
  })
})

describe('binding_message', () => {
  it('with a control character is invalid_binding_message at the CIBA endpoint only, invalid_request elsewhere', async () => {
    for (const e of OAUTH_ENDPOINTS) {
      const res = await post(e.url, `${e.base}&binding_message=a%0Ab`, e.headers)
      expect(answer(e.url, res)).toEqual({ where: e.url, status: 400, body: e.bindingMessage })
      expectOAuthError(res, e.url)
    }
  })
})
