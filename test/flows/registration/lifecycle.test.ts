// A registered client in use: a public native client signs a person in with the code flow and
// PKCE on a loopback port of its choosing (RFC 8252 §7.3), asking consent; its use keeps it alive,
// and the cleanup removes registered clients nobody used for REGISTERED_CLIENT_IDLE_LIFETIME.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCleanup } from '../../../src/jobs/cleanup.js'
import { idleRegisteredClients } from '../../../src/flows/registration/index.js'
import { createPgClientRegistrationStore } from '../../../src/stores/client-registrations.postgres.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import type { TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { consent, located, pkcePair, session } from '../authorization-code/harness.js'
import { bearer, createRegistrationTestApp, pathOf, PUBLIC_CLIENT, register } from './harness.js'

const HOUR = 3600
const DAY = 86_400

let authz: TestApp
beforeAll(async () => {
  authz = await createRegistrationTestApp()
}, 120_000)
afterAll(async () => authz.close())

function authorizeUrl(clientId: string, redirectUri: string, challenge: string): string {
  const q = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid offline_access',
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })
  return `/connect/authorize?${q}`
}

const lastUsed = async (clientId: string) =>
  (
    await authz.db.query<{ t: Date }>('SELECT last_used_at AS t FROM client_registrations WHERE client_id = $1', [clientId])
  ).rows[0]?.t.getTime()

describe('a registered public client', () => {
  it('completes the code flow with PKCE on another loopback port, after the person consents; its use is recorded', async () => {
    const c = (await register(authz.app, PUBLIC_CLIENT)).json()
    const t0 = authz.clock.now()
    authz.clock.advance(2 * HOUR) // a use is recorded at most once an hour
    const cookie = await session(authz)
    const { verifier, challenge } = pkcePair()
    const redirectUri = 'http://127.0.0.1:49152/callback' // registered with port 33418
    const url = authorizeUrl(c.client_id, redirectUri, challenge)
    const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
    expect(page.statusCode).toBe(200) // the consent screen: never skipped for a registered client
    expect(page.body).toContain('Assistant')
    expect(page.body).toContain('name="decision"')
    const decided = await consent(authz, url, cookie, 'approve')
    expect(decided.statusCode).toBe(303)
    const back = located(decided)
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri)
    expect(back.searchParams.get('state')).toBe('st-1')

    const params = {
      grant_type: 'authorization_code',
      client_id: c.client_id,
      code: back.searchParams.get('code')!,
      redirect_uri: redirectUri,
    }
    const noVerifier = await postForm(authz.app, '/connect/token', params)
    expect(noVerifier.statusCode).toBe(400) // PKCE is required of it
    expect(await lastUsed(c.client_id)).toBe(t0) // a refused request is no use

    const { verifier: v2, challenge: ch2 } = pkcePair()
    const again = await authz.app.inject({ method: 'GET', url: authorizeUrl(c.client_id, redirectUri, ch2), headers: { cookie } })
    const code = located(
      again.statusCode === 200 ? await consent(authz, authorizeUrl(c.client_id, redirectUri, ch2), cookie, 'approve') : again,
    )
    const token = await postForm(authz.app, '/connect/token', { ...params, code: code.searchParams.get('code')!, code_verifier: v2 })
    expect(token.statusCode).toBe(200)
    expect(token.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid offline_access' })
    expect(token.json().refresh_token).toEqual(expect.any(String))
    expect(token.json().id_token).toEqual(expect.any(String))
    expect(verifier).not.toBe(v2)
    await expect.poll(() => lastUsed(c.client_id)).toBe(authz.clock.now())
  })

  it('refuses a loopback redirect URI with another path or host, and a port change for an https one', async () => {
    const c = (
      await register(authz.app, { ...PUBLIC_CLIENT, redirect_uris: ['http://127.0.0.1:33418/callback', 'https://app.example:8443/cb'] })
    ).json()
    const cookie = await session(authz)
    for (const uri of ['http://127.0.0.1:49152/other', 'http://[::1]:33418/callback', 'https://app.example:9443/cb']) {
      const res = await authz.app.inject({ method: 'GET', url: authorizeUrl(c.client_id, uri, pkcePair().challenge), headers: { cookie } })
      expect(res.statusCode).toBe(400)
      expect(res.body).toContain('redirect_uri')
    }
  })
})

describe('idle registered clients', () => {
  it('are removed after REGISTERED_CLIENT_IDLE_LIFETIME without a token; used ones and seed clients stay', async () => {
    const used = (await register(authz.app, { grant_types: ['client_credentials'], scope: 'orders.read' })).json()
    const idle = (await register(authz.app, PUBLIC_CLIENT)).json()
    const cleanup = createCleanup({
      clock: authz.clock,
      logger: { info() {}, warn() {} },
      tasks: [idleRegisteredClients(createPgClientRegistrationStore(authz.db), authz.config.registeredClientIdleLifetime)],
    })
    authz.clock.advance(2 * HOUR)
    const basicAuth = `Basic ${Buffer.from(`${used.client_id}:${used.client_secret}`).toString('base64')}`
    expect(
      (await postForm(authz.app, '/connect/token', { grant_type: 'client_credentials' }, { authorization: basicAuth })).statusCode,
    ).toBe(200)
    await expect.poll(() => lastUsed(used.client_id)).toBe(authz.clock.now())

    authz.clock.advance(30 * DAY - HOUR) // idle: 30 days and an hour; used: a day less an hour
    const clients = createPgClientStore(authz.db)
    expect((await cleanup.runOnce()).idleRegisteredClients).toBeGreaterThanOrEqual(1)
    expect(await clients.findById(idle.client_id)).toBeUndefined()
    const gone = await authz.app.inject({
      method: 'GET',
      url: pathOf(idle.registration_client_uri),
      headers: bearer(idle.registration_access_token),
    })
    expect(gone.statusCode).toBe(401)
    expect(await clients.findById(used.client_id)).toBeDefined()
    expect(await clients.findById('web')).toBeDefined()

    authz.clock.advance(2 * HOUR)
    expect(await cleanup.runOnce()).toEqual({ idleRegisteredClients: 1 })
    expect(await clients.findById(used.client_id)).toBeUndefined()
    expect(await clients.findById('web')).toBeDefined()
  })
})

describe('RATE_LIMIT_REGISTRATION', () => {
  it('answers 429 temporarily_unavailable with Retry-After beyond the registrations per minute of an address', async () => {
    const limited = await createRegistrationTestApp({ RATE_LIMIT_REGISTRATION: '2' })
    try {
      expect((await register(limited.app, PUBLIC_CLIENT)).statusCode).toBe(201)
      expect((await register(limited.app, { bad: true, redirect_uris: [] })).statusCode).toBe(400)
      const third = await register(limited.app, PUBLIC_CLIENT)
      expect(third.statusCode).toBe(429)
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
      expect(third.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'too many requests from this address, retry later',
      })
      expect((await limited.db.query("SELECT count(*)::int AS n FROM clients WHERE self_registered = 'registration'")).rows[0]).toEqual({
        n: 1,
      })
    } finally {
      await limited.close()
    }
  })
})
