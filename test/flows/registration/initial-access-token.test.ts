// REGISTRATION=token: a registration needs an initial access token made with `authz
// registration-tokens create` (RFC 7591 §3), shown once, stored hashed, with an expiry and a use
// count; and REGISTRATION=off: no endpoint, nothing in discovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registrationTokensCommand } from '../../../src/cli/registration-tokens.js'
import type { CliContext } from '../../../src/cli/context.js'
import { UsageError } from '../../../src/cli/context.js'
import { createTestApp, type TestApp } from '../../helpers/app.js'
import { bearer, createRegistrationTestApp, PUBLIC_CLIENT, register } from './harness.js'

/** Runs `authz registration-tokens ARGS` on the app's database and clock; returns what it printed. */
async function cli(authz: TestApp, args: string[]): Promise<{ out: string[]; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const ctx: CliContext = {
    out: (l) => void out.push(l),
    err: (l) => void err.push(l),
    stdin: process.stdin,
    clock: authz.clock,
    config: () => authz.config,
    db: async () => authz.db,
  }
  await registrationTokensCommand.run(args, ctx)
  return { out, err }
}

/** The id and the token that `create` printed. */
function created(out: string[]): { id: string; token: string } {
  const field = (name: string) => out.find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2)
  return { id: field('id'), token: field('token') }
}

describe('REGISTRATION=token', () => {
  let authz: TestApp
  beforeAll(async () => {
    authz = await createRegistrationTestApp({ REGISTRATION: 'token' })
  }, 120_000)
  afterAll(async () => authz.close())

  it('refuses a registration without a token: 401, a Bearer challenge without error; discovery still lists the endpoint', async () => {
    const res = await register(authz.app, PUBLIC_CLIENT)
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="https://authz.test"')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'an initial access token is required' })
    const discovery = await authz.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(discovery.json().registration_endpoint).toBe('https://authz.test/connect/register')
  })

  it('refuses a wrong token: 401 with error="invalid_token"', async () => {
    const res = await register(authz.app, PUBLIC_CLIENT, bearer('A'.repeat(43)))
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="https://authz.test", error="invalid_token"')
    expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'the initial access token is invalid' })
  })

  it('creates a token shown once and stored hashed; it registers up to --max-uses clients, counted in the list', async () => {
    const { out, err } = await cli(authz, ['create', '--max-uses', '2', '--description', 'for the IDE team'])
    const { id, token } = created(out)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(err).toEqual(['The token is shown only now: send it as "Authorization: Bearer TOKEN" to POST /connect/register.'])
    const { rows } = await authz.db.query('SELECT * FROM registration_tokens WHERE id = $1', [id])
    expect(JSON.stringify(rows)).not.toContain(token)

    // A refused registration does not use the token up.
    const bad = await register(authz.app, { ...PUBLIC_CLIENT, grant_types: ['password'] }, bearer(token))
    expect(bad.json().error).toBe('invalid_client_metadata')
    expect((await register(authz.app, PUBLIC_CLIENT, bearer(token))).statusCode).toBe(201)
    expect((await register(authz.app, PUBLIC_CLIENT, bearer(token))).statusCode).toBe(201)
    const third = await register(authz.app, PUBLIC_CLIENT, bearer(token))
    expect(third.statusCode).toBe(401)
    expect(third.json().error).toBe('invalid_token')

    const listed = JSON.parse((await cli(authz, ['list', '--json'])).out.join('\n')) as Record<string, unknown>[]
    expect(listed.find((t) => t.id === id)).toEqual({
      id,
      state: 'used up',
      description: 'for the IDE team',
      createdAt: new Date(authz.clock.now()).toISOString(),
      expiresAt: new Date(authz.clock.now() + 7 * 86_400_000).toISOString(),
      uses: 2,
      maxUses: 2,
      revokedAt: null,
    })
  })

  it('stops working when it expires', async () => {
    const { id, token } = created((await cli(authz, ['create', '--expires-in', '60'])).out)
    authz.clock.advance(59)
    const inTime = await register(authz.app, PUBLIC_CLIENT, bearer(token))
    expect(inTime.statusCode).toBe(201)
    authz.clock.advance(1)
    const late = await register(authz.app, PUBLIC_CLIENT, bearer(token))
    expect(late.statusCode).toBe(401)
    expect(late.json().error).toBe('invalid_token')
    const { out } = await cli(authz, ['list'])
    expect(out[0]).toMatch(/^ID\s+STATE\s+EXPIRES\s+USES\s+DESCRIPTION$/)
    expect(out.find((l) => l.startsWith(id))).toMatch(new RegExp(`^${id}\\s+expired\\s+\\S+\\s+1/any`))
  })

  it('stops working when revoked; revoking twice or an unknown id is an error', async () => {
    const { id, token } = created((await cli(authz, ['create'])).out)
    expect((await cli(authz, ['revoke', id])).out).toEqual([`revoked registration token "${id}"`])
    const res = await register(authz.app, PUBLIC_CLIENT, bearer(token))
    expect(res.statusCode).toBe(401)
    await expect(cli(authz, ['revoke', id])).rejects.toThrow(`no registration token "${id}" that is not revoked already`)
    await expect(cli(authz, ['create', '--max-uses', '0'])).rejects.toBeInstanceOf(UsageError)
  })
})

describe('REGISTRATION=off (the default)', () => {
  it('answers 404 at the endpoint and has no registration_endpoint in discovery', async () => {
    const authz = await createTestApp()
    try {
      const res = await register(authz.app, PUBLIC_CLIENT)
      expect(res.statusCode).toBe(404)
      expect(res.json().error).toBe('not_found')
      const manage = await authz.app.inject({ method: 'GET', url: '/connect/register/some-client', headers: bearer('A'.repeat(43)) })
      expect(manage.statusCode).toBe(404)
      for (const url of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        expect((await authz.app.inject({ method: 'GET', url })).json()).not.toHaveProperty('registration_endpoint')
      }
    } finally {
      await authz.close()
    }
  })
})
