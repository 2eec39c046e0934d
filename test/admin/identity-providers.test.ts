// /admin/identity-providers: the seed file's identityProviders entries in and out, the client
// secret write-only (neither it nor its ciphertext answered) and encrypted at rest with
// KEY_ENCRYPTION_SECRET, writes judged against If-Match (412), problems with their JSON path, and
// every change NOTIFYed to every replica and seen by the sign-in page at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decryptAtRest, deriveKeyEncryptionKey, identityProviderSecretAad } from '../../src/keys/key-crypto.js'
import { createPgConfigChangeStore } from '../../src/stores/config-changes.postgres.js'
import type { ConfigChange } from '../../src/stores/config-changes.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminAudit, adminToken, createAdminTestApp, PROBLEM, readToken } from './admin-fixtures.js'

const KEY = 'a key encryption secret for tests'
const CORP = { displayName: 'Corp SSO', type: 'oidc', authority: 'https://sso.corp.example', clientId: 'authz-rp' }
/** What GET answers for CORP: the seed file's defaults filled in, no clientSecret. */
const CORP_VIEW = {
  scheme: 'corp',
  ...CORP,
  scope: 'openid profile email',
  enabled: true,
  emailDomains: [],
  linkByVerifiedEmail: false,
}

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp({ KEY_ENCRYPTION_SECRET: KEY })
  call = admin(t, await adminToken(t))
})
afterAll(async () => t.close())

const storedSecret = async () =>
  (
    await t.db.query<{ client_secret: string | null; client_secret_encrypted: boolean }>(
      `SELECT client_secret, client_secret_encrypted FROM identity_providers WHERE scheme = 'corp'`,
    )
  ).rows[0]
const plainSecret = async () => {
  const row = await storedSecret()
  return row?.client_secret
    ? decryptAtRest(row.client_secret, deriveKeyEncryptionKey(KEY), identityProviderSecretAad('corp'), 'test')
    : null
}
const signInPage = async () => (await t.app.inject({ method: 'GET', url: '/account/sign-in?return_to=%2Faccount' })).body

describe('admin API: identity providers', () => {
  it('creates a provider with PUT (201, Location, ETag), its secret encrypted at rest and never answered', async () => {
    const res = await call('PUT', '/admin/identity-providers/corp', { body: { ...CORP, clientSecret: 'upstream-secret' } })
    expect(res.statusCode).toBe(201)
    expect(res.headers.location).toBe('/admin/identity-providers/corp')
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(res.json()).toEqual(CORP_VIEW)
    const row = await storedSecret()
    expect(row?.client_secret_encrypted).toBe(true)
    expect(row?.client_secret).not.toContain('upstream-secret')
    expect(await plainSecret()).toBe('upstream-secret')
    const got = await admin(t, await readToken(t))('GET', '/admin/identity-providers/corp')
    expect(got.statusCode).toBe(200)
    expect(got.json()).toEqual(CORP_VIEW)
    expect(got.headers.etag).toBe(res.headers.etag)
    expect(got.body).not.toContain(row!.client_secret!)
    expect(adminAudit(t).at(-1)).toMatchObject({
      event: 'admin.changed',
      client_id: 'automation',
      resource: 'identity-providers/corp',
      action: 'create',
    })
    expect(JSON.stringify(adminAudit(t))).not.toContain('upstream-secret')
  })

  it('says whether a provider has a client secret, never the secret, to a reader', async () => {
    const read = admin(t, await readToken(t))
    const corp = await read('GET', '/admin/identity-providers/corp/client-secret')
    expect(corp.statusCode).toBe(200)
    expect(corp.json()).toEqual({ set: true })
    await call('PUT', '/admin/identity-providers/nosecret', { body: { ...CORP, authority: 'https://public.example' } })
    expect((await read('GET', '/admin/identity-providers/nosecret/client-secret')).json()).toEqual({ set: false })
    await call('DELETE', '/admin/identity-providers/nosecret')
    const missing = await read('GET', '/admin/identity-providers/nobody/client-secret')
    expect(missing.statusCode).toBe(404)
    expect(missing.headers).toMatchObject(PROBLEM)
  })

  it('lists providers by scheme, a page at a time, filtered by enabled', async () => {
    const put = await call('PUT', '/admin/identity-providers/partner', {
      body: { displayName: 'Partner', type: 'oidc', authority: 'https://id.partner.example', clientId: 'x', enabled: false },
    })
    expect(put.statusCode).toBe(201)
    const p1 = (await call('GET', '/admin/identity-providers?limit=1')).json()
    expect(p1.items).toEqual([CORP_VIEW])
    const p2 = (await call('GET', `/admin/identity-providers?limit=1&cursor=${p1.nextCursor}`)).json()
    expect(p2.items.map((p: { scheme: string }) => p.scheme)).toEqual(['partner'])
    expect(p2).not.toHaveProperty('nextCursor')
    expect((await call('GET', '/admin/identity-providers?enabled=false')).json().items.map((p: { scheme: string }) => p.scheme)).toEqual([
      'partner',
    ])
  })

  it('replaces with PUT: what GET answered goes back keeping the secret, the same PUT twice changes nothing', async () => {
    const got = await call('GET', '/admin/identity-providers/corp')
    const before = (await storedSecret())!.client_secret
    const audits = adminAudit(t).length
    const same = await call('PUT', '/admin/identity-providers/corp', {
      body: got.json(),
      headers: { 'if-match': got.headers.etag as string },
    })
    expect(same.statusCode).toBe(200)
    expect(same.headers.etag).toBe(got.headers.etag)
    expect((await storedSecret())!.client_secret).toBe(before)
    expect(adminAudit(t)).toHaveLength(audits)

    const renamed = await call('PUT', '/admin/identity-providers/corp', {
      body: { ...got.json<Record<string, unknown>>(), displayName: 'Corporate sign-in', clientSecret: 'rotated-secret' },
      headers: { 'if-match': got.headers.etag as string },
    })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toEqual({ ...CORP_VIEW, displayName: 'Corporate sign-in' })
    expect(renamed.headers.etag).not.toBe(got.headers.etag)
    expect(await plainSecret()).toBe('rotated-secret')
    expect(adminAudit(t).at(-1)).toMatchObject({ action: 'replace', changes: ['displayName', 'clientSecret'] })
  })

  it('answers 412 to a write naming a version that is no longer stored, changing nothing', async () => {
    const got = await call('GET', '/admin/identity-providers/corp')
    const stale = '"AAAAAAAAAAAAAAAAAAAAAAAAAAA"'
    const res = await call('PUT', '/admin/identity-providers/corp', { body: { ...CORP, enabled: false }, headers: { 'if-match': stale } })
    expect(res.statusCode).toBe(412)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Precondition Failed',
      status: 412,
      detail: 'the resource is not in the version If-Match names: read it again',
    })
    expect((await call('DELETE', '/admin/identity-providers/corp', { headers: { 'if-match': stale } })).statusCode).toBe(412)
    const create = await call('PUT', '/admin/identity-providers/corp', { body: CORP, headers: { 'if-none-match': '*' } })
    expect(create.statusCode).toBe(412)
    expect((await call('GET', '/admin/identity-providers/corp')).headers.etag).toBe(got.headers.etag)
  })

  it('refuses an invalid provider with the JSON path of each problem', async () => {
    const res = await call('PUT', '/admin/identity-providers/corp', {
      body: { ...CORP, type: 'saml', authority: 'http://sso.corp.example', emailDomains: ['corp', 'ok.example'], colour: 'red' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    const body = res.json()
    expect(body).toMatchObject({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'the request body is not a valid resource',
    })
    expect(body.errors.map((e: { path: string }) => e.path)).toEqual(['type', 'authority', 'emailDomains[0]', '(root)'])
    expect(body.errors[0].detail).toBe('"saml" is not a supported type: "oidc" is the only one')
    const named = await call('PUT', '/admin/identity-providers/corp', { body: { ...CORP, scheme: 'other' } })
    expect(named.json().errors).toEqual([{ path: 'scheme', detail: 'must be the scheme of the path, or left out' }])
    const reserved = await call('PUT', '/admin/identity-providers/local', { body: CORP })
    expect(reserved.statusCode).toBe(400)
    expect(reserved.json().errors).toEqual([
      { path: 'scheme', detail: '"local" is reserved (acr_values idp:local means the password form)' },
    ])
  })

  it('needs a token, and authz:admin to write', async () => {
    const none = await admin(t, undefined)('GET', '/admin/identity-providers')
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="https://authz.test"')
    const res = await admin(t, await readToken(t))('PUT', '/admin/identity-providers/corp', { body: CORP })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="https://authz.test", error="insufficient_scope", scope="authz:admin"')
  })

  it('answers 404 for a provider that does not exist', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(method, '/admin/identity-providers/nowhere')
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such identity provider' })
    }
  })

  it('tells every replica of a change at once (NOTIFY), and the sign-in page shows it at once', async () => {
    const heard: (ConfigChange | undefined)[] = []
    const unsubscribe = await createPgConfigChangeStore(t.db).subscribe((c) => void heard.push(c))
    try {
      expect(await signInPage()).toContain('Corporate sign-in')
      const got = await call('GET', '/admin/identity-providers/corp')
      const off = await call('PUT', '/admin/identity-providers/corp', {
        body: { ...got.json<Record<string, unknown>>(), enabled: false },
        headers: { 'if-match': got.headers.etag as string },
      })
      expect(off.statusCode).toBe(200)
      expect(await signInPage()).not.toContain('Corporate sign-in')
      const start = performance.now()
      while (!heard.includes('identityProviders') && performance.now() - start < 1000) await new Promise((r) => setTimeout(r, 10))
      expect(heard).toContain('identityProviders')
    } finally {
      await unsubscribe()
    }
  })

  it('removes a provider with DELETE (204): its sign-in is gone', async () => {
    const got = await call('GET', '/admin/identity-providers/corp')
    const res = await call('DELETE', '/admin/identity-providers/corp', { headers: { 'if-match': got.headers.etag as string } })
    expect(res.statusCode).toBe(204)
    expect((await call('GET', '/admin/identity-providers/corp')).statusCode).toBe(404)
    expect(await storedSecret()).toBeUndefined()
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'identity-providers/corp', action: 'delete', changes: [] })
    const challenge = await t.app.inject({ method: 'GET', url: '/federation/corp/challenge' })
    expect(challenge.statusCode).toBe(404)
  })
})
