// Resource indicators and audiences (RFC 8707): a token restricted to a resource stays restricted
// when it is refreshed (§2.2), and an API resource sees a token as active at introspection only
// when the token's audience includes it (RFC 7662 §2.2), JWT and reference tokens alike.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createScopeResolver } from '../../../src/grants/scopes.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { createPgGrantStore } from '../../../src/stores/grants.postgres.js'
import { createPgResourceStore } from '../../../src/stores/resources.postgres.js'
import { createTokenIssuer } from '../../../src/tokens/issuer.js'
import { createTestApp, type TestApp } from '../../helpers/app.js'
import { postFormBasic } from '../../helpers/http.js'

let authz: TestApp
let firstRefreshToken: (clientId: string, scope: string, resource?: string) => Promise<string>
beforeAll(async () => {
  authz = await createTestApp()
  const client = (clientId: string, grant: string, accessTokenType: 'jwt' | 'reference') => ({
    clientId,
    secrets: [{ value: `${clientId}-secret` }],
    allowedGrantTypes: [grant],
    accessTokenType,
    allowedScopes: ['orders.read', 'shared.write', 'billing.read', 'offline_access'],
    allowOfflineAccess: grant === 'refresh_token',
  })
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }, { name: 'shared.write' }, { name: 'billing.read' }],
    apiResources: [
      { name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] },
      // Shares orders.read with orders-api: scopes alone cannot tell their tokens apart.
      { name: 'shared-api', scopes: ['orders.read', 'shared.write'], secrets: [{ value: 'shared-secret' }] },
      { name: 'billing-api', scopes: ['billing.read'], secrets: [{ value: 'billing-secret' }] },
    ],
    identityResources: ['offline_access'],
    clients: [
      client('cc', 'client_credentials', 'jwt'),
      client('cc-ref', 'client_credentials', 'reference'),
      client('app', 'refresh_token', 'jwt'),
      client('app-ref', 'refresh_token', 'reference'),
    ],
    users: [{ subjectId: 'u-1', username: 'alice', claims: {} }],
  })
  const resources = createPgResourceStore(authz.db)
  const clients = createPgClientStore(authz.db)
  const issuer = createTokenIssuer({
    config: authz.config,
    clock: authz.clock,
    keys: authz.app.authz.keys,
    grants: createPgGrantStore(authz.db),
    resources,
  })
  const scopes = createScopeResolver({ resources })
  firstRefreshToken = async (clientId, scope, resource) => {
    const c = (await clients.findById(clientId))!
    const granted = await scopes.resolve(c, scope, { allowIdentity: true, resource })
    return (await issuer.issue({ client: c, subjectId: 'u-1', granted, refreshToken: true })).refresh_token!
  }
})
afterAll(() => authz.close())

const token = (clientId: string, params: Record<string, string>) =>
  postFormBasic(authz.app, '/connect/token', params, clientId, `${clientId}-secret`)
const seenBy = async (api: 'orders' | 'shared' | 'billing', accessToken: string) =>
  (await postFormBasic(authz.app, '/connect/introspect', { token: accessToken }, `${api}-api`, `${api}-secret`)).json<
    Record<string, unknown>
  >()

describe('introspection by an API resource checks the audience', () => {
  for (const clientId of ['cc', 'cc-ref']) {
    it(`${clientId}: a token for orders-api is inactive for shared-api, although it carries a scope of both`, async () => {
      const res = await token(clientId, { grant_type: 'client_credentials', scope: 'orders.read', resource: 'orders-api' })
      expect(res.statusCode).toBe(200)
      const at = res.json().access_token as string
      expect(await seenBy('orders', at)).toMatchObject({ active: true, aud: 'orders-api', scope: 'orders.read' })
      expect(await seenBy('shared', at)).toEqual({ active: false })
      expect(await seenBy('billing', at)).toEqual({ active: false })
    })

    it(`${clientId}: without a resource the token is for every API that carries its scopes, each seeing its own`, async () => {
      const at = (await token(clientId, { grant_type: 'client_credentials', scope: 'orders.read shared.write' })).json()
        .access_token as string
      expect(await seenBy('orders', at)).toMatchObject({ active: true, aud: ['orders-api', 'shared-api'], scope: 'orders.read' })
      expect(await seenBy('shared', at)).toMatchObject({
        active: true,
        aud: ['orders-api', 'shared-api'],
        scope: 'orders.read shared.write',
      })
      expect(await seenBy('billing', at)).toEqual({ active: false })
    })
  }
})

describe('refresh keeps the resource restriction (RFC 8707 §2.2)', () => {
  const refresh = (clientId: string, params: Record<string, string>) => token(clientId, { grant_type: 'refresh_token', ...params })

  for (const clientId of ['app', 'app-ref']) {
    it(`${clientId}: the refreshed access token, and the one after the next rotation, are still for orders-api only`, async () => {
      let rt = await firstRefreshToken(clientId, 'orders.read offline_access', 'orders-api')
      for (let rotation = 0; rotation < 2; rotation++) {
        const res = await refresh(clientId, { refresh_token: rt })
        expect(res.statusCode).toBe(200)
        expect(res.json().scope).toBe('orders.read offline_access')
        const at = res.json().access_token as string
        if (clientId === 'app') expect(decodeJwt(at).aud).toBe('orders-api')
        expect(await seenBy('orders', at)).toMatchObject({ active: true, aud: 'orders-api' })
        expect(await seenBy('shared', at)).toEqual({ active: false })
        rt = res.json().refresh_token as string
      }
    })
  }

  it('a resource on refresh narrows the token to one resource of the original grant', async () => {
    const rt = await firstRefreshToken('app', 'orders.read shared.write offline_access')
    const res = await refresh('app', { refresh_token: rt, resource: 'orders-api' })
    expect(res.statusCode).toBe(200)
    expect(res.json().scope).toBe('orders.read offline_access')
    expect(decodeJwt(res.json().access_token).aud).toBe('orders-api')
  })

  // RFC 6749 §6 and RFC 8707 §2.2: `resource` narrows the access token; the new refresh token
  // keeps the original grant's audiences, so one narrowed refresh does not cut the others off for good.
  for (const clientId of ['app', 'app-ref']) {
    it(`${clientId}: after a refresh narrowed to one resource, the next refresh without resource is for every audience again`, async () => {
      const rt = await firstRefreshToken(clientId, 'orders.read shared.write offline_access')
      const narrow = await refresh(clientId, { refresh_token: rt, resource: 'orders-api' })
      expect(narrow.statusCode).toBe(200)
      expect(narrow.json().scope).toBe('orders.read offline_access')
      expect(await seenBy('orders', narrow.json().access_token)).toMatchObject({ active: true, aud: 'orders-api' })
      expect(await seenBy('shared', narrow.json().access_token)).toEqual({ active: false })
      const full = await refresh(clientId, { refresh_token: narrow.json().refresh_token })
      expect(full.statusCode).toBe(200)
      expect(full.json().scope).toBe('orders.read shared.write offline_access')
      expect(await seenBy('shared', full.json().access_token)).toMatchObject({
        active: true,
        aud: ['orders-api', 'shared-api'],
        scope: 'orders.read shared.write',
      })
    })
  }

  it('a resource outside the original grant is invalid_target, and the refresh token stays usable', async () => {
    const rt = await firstRefreshToken('app', 'orders.read offline_access', 'orders-api')
    for (const resource of ['shared-api', 'billing-api', 'no-such-api']) {
      const res = await refresh('app', { refresh_token: rt, resource })
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 400,
        body: { error: 'invalid_target', error_description: 'resource is not part of the original grant' },
      })
    }
    expect((await refresh('app', { refresh_token: rt })).statusCode).toBe(200)
  })
})
