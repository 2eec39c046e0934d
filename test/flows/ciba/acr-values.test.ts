// acr_values `tenant:` and `idp:` (Duende's conventions) end up in tokens and on the approval page,
// so a client asserts only what it is configured for: a tenant from its allowedTenants, an idp from
// its identityProviderRestrictions; and like binding_message (CIBA Core §7.1) the values hold no
// control or format characters and are bounded in length.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed, SeedError } from '../../../src/seed/apply.js'
import { seedJsonSchema } from '../../../src/seed/schema.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { postForm } from '../../helpers/http.js'
import { BANK, createCibaTestApp, NO_STORE, startCiba, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
  await applySeed(authz.db, {
    clients: [
      {
        clientId: 'multi',
        secrets: [{ value: 'multi-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        allowedTenants: ['acme', 'globex'],
      },
      {
        clientId: 'single',
        secrets: [{ value: 'single-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
    ],
  })
})
afterAll(() => authz.close())

const invalid = (description: string) => ({ error: 'invalid_request', error_description: description })
const NOT_ALLOWED_TENANT = invalid('acr_values holds a tenant this client may not assert')
const NOT_ALLOWED_IDP = invalid('acr_values holds an idp this client may not assert')
const UNPRINTABLE = invalid('acr_values holds control or format characters')

async function token(clientId: string, acrValues: string) {
  return postForm(authz.app, '/connect/token', {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: `${clientId}-secret`,
    scope: 'orders.read',
    acr_values: acrValues,
  })
}

async function expectRefused(res: Awaited<ReturnType<typeof token>>, body: object) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body })
  expect(res.headers).toMatchObject(NO_STORE)
}

describe('tenant: at the token endpoint', () => {
  it('puts only a tenant the client is configured for into the access token', async () => {
    for (const tenant of ['acme', 'globex']) {
      const res = await token('multi', `tenant:${tenant}`)
      expect(res.statusCode).toBe(200)
      expect(decodeJwt(res.json().access_token).tenant).toBe(tenant)
    }
    await expectRefused(await token('multi', 'tenant:any-other-tenant'), NOT_ALLOWED_TENANT)
    // A client configured for no tenant asserts none.
    await expectRefused(await token('single', 'tenant:any-other-tenant'), NOT_ALLOWED_TENANT)
    expect((await token('single', 'urn:mace:incommon:iap:silver')).statusCode).toBe(200)
  })

  it('refuses two tenants, one too long, and control or format characters', async () => {
    await expectRefused(await token('multi', 'tenant:acme tenant:globex'), invalid('acr_values holds more than one tenant'))
    await expectRefused(await token('multi', `tenant:${'a'.repeat(101)}`), invalid('acr_values holds a value that is too long'))
    for (const v of ['tenant:ac\u202eme', 'tenant:acme\u200b', 'tenant:\u2066acme', 'x\u00ad'])
      await expectRefused(await token('multi', v), UNPRINTABLE)
  })
})

describe('tenant: and idp: at the CIBA endpoint', () => {
  const ok = { ...BANK, scope: 'openid', login_hint: 'alice' }

  it('refuses what the approval page would show: bidi overrides, zero-width characters, a tenant or idp not configured', async () => {
    await authz.db.query('DELETE FROM ciba_requests')
    const cases: Array<[string, object]> = [
      ['tenant:ac\u202eme', UNPRINTABLE],
      ['tenant:acme\u200b', UNPRINTABLE],
      ['idp:corp\u200d-ad', UNPRINTABLE],
      ['idp:\u061ccorp-ad', UNPRINTABLE],
      ['tenant:any-other-tenant', NOT_ALLOWED_TENANT],
      ['idp:google', NOT_ALLOWED_IDP],
      ['idp:corp-ad idp:corp-ad', invalid('acr_values holds more than one idp')],
      [`idp:${'c'.repeat(101)}`, invalid('acr_values holds a value that is too long')],
    ]
    for (const [acr, body] of cases) {
      const res = await startCiba(authz, { ...ok, acr_values: acr })
      expect({ acr, status: res.statusCode, body: res.json() }).toEqual({ acr, status: 400, body })
    }
    // A client without identityProviderRestrictions may use every provider, and only a provider:
    // idp: is an instruction to forward the sign-in, never a label.
    const plain = await startCiba(authz, {
      client_id: 'plain',
      client_secret: 'plain-secret',
      scope: 'openid',
      login_hint: 'alice',
      acr_values: 'idp:nowhere',
    })
    expect({ status: plain.statusCode, body: plain.json() }).toEqual({ status: 400, body: NOT_ALLOWED_IDP })
    expect((await authz.db.query('SELECT count(*)::int AS n FROM ciba_requests')).rows).toEqual([{ n: 0 }])
    expect(authz.notifications.filter((n) => n.acr_values.length > 0)).toEqual([])
  })

  it('stores a configured tenant and idp', async () => {
    const res = await startCiba(authz, { ...ok, acr_values: 'tenant:acme idp:corp-ad' })
    expect(res.statusCode).toBe(200)
    const { rows } = await authz.db.query('SELECT tenant, idp FROM ciba_requests ORDER BY created_at DESC LIMIT 1')
    expect(rows).toEqual([{ tenant: 'acme', idp: 'corp-ad' }])
  })
})

describe('allowedTenants in the seed file', () => {
  it('is stored, read back and published in the JSON Schema', async () => {
    expect((await createPgClientStore(authz.db).findById('multi'))!.allowedTenants).toEqual(['acme', 'globex'])
    expect((await createPgClientStore(authz.db).findById('single'))!.allowedTenants).toEqual([])
    type Schema = { description?: string; items: Schema; properties: Record<string, Schema> }
    const property = (seedJsonSchema() as Schema).properties.clients!.items.properties.allowedTenants!
    expect(property).toMatchObject({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 } })
    expect(property.description).toMatch(/tenant/)
  })

  it('refuses a tenant name a client could never assert', async () => {
    for (const [name, problem] of [
      ['', 'Too small'],
      ['two words', 'must not contain whitespace'],
      ['ac\u202eme', 'must not contain control or format characters'],
      ['a'.repeat(101), 'Too big'],
    ]) {
      const err = await applySeed(authz.db, { clients: [{ clientId: 'bad', allowedTenants: ['ok', name] }] }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(SeedError)
      expect((err as SeedError).message).toContain('clients[0].allowedTenants[1]')
      expect((err as SeedError).message).toContain(problem)
    }
    expect(await createPgClientStore(authz.db).findById('bad')).toBeUndefined()
  })
})
