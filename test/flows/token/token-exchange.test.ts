// Token exchange (RFC 8693) at the token endpoint: subject and actor tokens of ours (JWT and
// reference), scope never wider than the subject token's, the act claim (§4.1), the target,
// every error with its status and code, and discovery's grant list.
import { createLocalJWKSet, decodeJwt, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const AT = 'urn:ietf:params:oauth:token-type:access_token'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }, { name: 'orders.write' }, { name: 'billing.read' }],
    apiResources: [
      { name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'orders-secret' }] },
      { name: 'billing-api', scopes: ['billing.read'], secrets: [{ value: 'billing-secret' }] },
    ],
    identityResources: ['openid', 'profile', 'offline_access'],
    clients: [
      {
        clientId: 'web',
        secrets: [{ value: 'web-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'profile', 'orders.read', 'orders.write', 'offline_access'],
        allowOfflineAccess: true,
      },
      {
        clientId: 'web-ref',
        secrets: [{ value: 'web-ref-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['orders.read', 'orders.write'],
        accessTokenType: 'reference',
      },
      {
        clientId: 'web-short',
        secrets: [{ value: 'web-short-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['orders.read'],
        accessTokenLifetime: 60,
      },
      // Whose tokens each may exchange, and for which APIs: token-exchange-policy.test.ts.
      {
        clientId: 'gateway',
        secrets: [{ value: 'gateway-secret' }],
        allowedGrantTypes: [TE],
        allowedScopes: ['openid', 'orders.read', 'orders.write', 'billing.read'],
        allowedSubjectTokenClients: ['web', 'web-ref', 'web-short', 'gateway'],
        allowedExchangeAudiences: ['orders-api', 'billing-api'],
      },
      {
        clientId: 'gateway-ref',
        secrets: [{ value: 'gateway-ref-secret' }],
        allowedGrantTypes: [TE],
        allowedScopes: ['orders.read'],
        accessTokenType: 'reference',
        allowedSubjectTokenClients: ['web-ref'],
        allowedExchangeAudiences: ['orders-api'],
      },
      {
        clientId: 'svc-a',
        secrets: [{ value: 'svc-a-secret' }],
        allowedGrantTypes: ['client_credentials', TE],
        allowedScopes: ['orders.read'],
        allowedSubjectTokenClients: ['svc-a', 'web'],
        allowedExchangeAudiences: ['orders-api'],
      },
      {
        clientId: 'svc-b',
        secrets: [{ value: 'svc-b-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        accessTokenType: 'reference',
      },
      {
        clientId: 'no-exchange',
        secrets: [{ value: 'ne-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
      { clientId: 'spa', requireClientSecret: false, allowedGrantTypes: [TE], allowedScopes: ['orders.read'] },
    ],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice' } }],
  })
})
afterAll(() => authz.close())

const token = (params: Record<string, string>, id: string, secret: string) => postFormBasic(authz.app, '/connect/token', params, id, secret)
const GATEWAY = ['gateway', 'gateway-secret'] as const
const exchange = (params: Record<string, string>, [id, secret]: readonly [string, string] = GATEWAY) =>
  token({ grant_type: TE, ...params }, id, secret)

interface Tokens {
  access_token: string
  id_token?: string
  refresh_token?: string
}
async function userToken(client = 'web', scope = 'openid profile orders.read orders.write offline_access'): Promise<Tokens> {
  const res = await token({ grant_type: 'password', username: 'alice', password: 'alice-pw', scope }, client, `${client}-secret`)
  expect(res.statusCode).toBe(200)
  return res.json()
}
async function serviceToken(client: string): Promise<string> {
  const res = await token({ grant_type: 'client_credentials', scope: 'orders.read' }, client, `${client}-secret`)
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}
const claimsOf = async (jwt: string) => {
  const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
  return (await jwtVerify(jwt, jwks, { issuer: TEST_ISSUER, typ: 'at+jwt', currentDate: new Date(authz.clock.now()) })).payload
}
const introspect = async (tok: string) =>
  (await postFormBasic(authz.app, '/connect/introspect', { token: tok }, 'orders-api', 'orders-secret')).json()

function expectError(res: Awaited<ReturnType<typeof exchange>>, status: number, body: Record<string, string>) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body })
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
}

describe('token exchange: the issued token', () => {
  it('is for the same subject, issued to the exchanging client, with the subject scopes the client may have and issued_token_type', async () => {
    const subject = await userToken()
    const res = await exchange({ subject_token: subject.access_token, subject_token_type: AT })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    expect(res.json()).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid orders.read orders.write',
      issued_token_type: AT,
    })
    const now = Math.floor(authz.clock.now() / 1000)
    expect(await claimsOf(res.json().access_token)).toEqual({
      iss: TEST_ISSUER,
      sub: 'alice-1',
      client_id: 'gateway',
      aud: 'orders-api',
      scope: 'openid orders.read orders.write',
      auth_time: now,
      amr: ['pwd'],
      jti: expect.any(String),
      iat: now,
      nbf: now,
      exp: now + 3600,
    })
  })

  it('narrows to the requested scope and to an audience or resource; requested_token_type access_token is accepted', async () => {
    const subject = (await userToken()).access_token
    const narrow = await exchange({ subject_token: subject, subject_token_type: AT, scope: 'orders.read', requested_token_type: AT })
    expect(narrow.json()).toMatchObject({ scope: 'orders.read', issued_token_type: AT })
    const viaAudience = await exchange({
      subject_token: subject,
      subject_token_type: AT,
      scope: 'openid orders.read',
      audience: 'orders-api',
    })
    expect(viaAudience.statusCode).toBe(200)
    expect(await claimsOf(viaAudience.json().access_token)).toMatchObject({ aud: 'orders-api', scope: 'openid orders.read' })
    const viaResource = await exchange({
      subject_token: subject,
      subject_token_type: AT,
      scope: 'orders.write',
      resource: 'orders-api',
      audience: 'orders-api',
    })
    expect(viaResource.json()).toMatchObject({ scope: 'orders.write' })
  })

  it('never outlives the subject token', async () => {
    const subject = (await userToken('web-short', 'orders.read')).access_token
    authz.clock.advance(20)
    const res = await exchange({ subject_token: subject, subject_token_type: AT })
    expect(res.json()).toMatchObject({ expires_in: 40 })
    expect((await claimsOf(res.json().access_token)).exp).toBe(decodeJwt(subject).exp)
    authz.clock.advance(40)
    expectError(await exchange({ subject_token: subject, subject_token_type: AT }), 400, {
      error: 'invalid_request',
      error_description: 'subject_token is not an active access token of this server',
    })
  })

  it('with an actor token: act.sub is the actor token subject, not the client id', async () => {
    const subject = (await userToken()).access_token
    const actor = await serviceToken('svc-a')
    const res = await exchange({
      subject_token: subject,
      subject_token_type: AT,
      actor_token: actor,
      actor_token_type: AT,
      scope: 'orders.read',
    })
    expect(res.statusCode).toBe(200)
    const claims = await claimsOf(res.json().access_token)
    expect(claims).toMatchObject({ sub: 'alice-1', client_id: 'gateway', act: { sub: 'svc-a' } })
    expect(claims.act).toEqual({ sub: 'svc-a' })
  })

  it('nests the actor token own act; otherwise the subject token act as the prior actor; keeps it without an actor', async () => {
    const alice = (await userToken()).access_token
    // svc-a acting for alice.
    const delegated = (
      await exchange({
        subject_token: alice,
        subject_token_type: AT,
        actor_token: await serviceToken('svc-a'),
        actor_token_type: AT,
        scope: 'orders.read',
      })
    ).json().access_token
    // svc-b (reference token) acting on the delegated token: svc-b now, svc-a before.
    const chained = await exchange({
      subject_token: delegated,
      subject_token_type: AT,
      actor_token: await serviceToken('svc-b'),
      actor_token_type: AT,
    })
    expect((await claimsOf(chained.json().access_token)).act).toEqual({ sub: 'svc-b', act: { sub: 'svc-a' } })
    // An actor token that itself carries act: svc-a's token exchanged by svc-a with svc-b acting.
    const svcAViaB = (
      await exchange(
        {
          subject_token: await serviceToken('svc-a'),
          subject_token_type: AT,
          actor_token: await serviceToken('svc-b'),
          actor_token_type: AT,
        },
        ['svc-a', 'svc-a-secret'],
      )
    ).json().access_token
    expect((await claimsOf(svcAViaB)).act).toEqual({ sub: 'svc-b' })
    const nested = await exchange({
      subject_token: alice,
      subject_token_type: AT,
      actor_token: svcAViaB,
      actor_token_type: AT,
      scope: 'orders.read',
    })
    expect((await claimsOf(nested.json().access_token)).act).toEqual({ sub: 'svc-a', act: { sub: 'svc-b' } })
    // No actor: a delegated token stays delegated.
    const kept = await exchange({ subject_token: delegated, subject_token_type: AT })
    expect((await claimsOf(kept.json().access_token)).act).toEqual({ sub: 'svc-a' })
  })

  it('takes reference tokens as subject and actor, and issues a reference token whose introspection shows act', async () => {
    const subject = (await userToken('web-ref', 'orders.read orders.write')).access_token
    expect(subject).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const actor = await serviceToken('svc-b')
    const res = await exchange({ subject_token: subject, subject_token_type: AT, actor_token: actor, actor_token_type: AT }, [
      'gateway-ref',
      'gateway-ref-secret',
    ])
    expect(res.json()).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'orders.read',
      issued_token_type: AT,
    })
    expect(await introspect(res.json().access_token)).toMatchObject({
      active: true,
      sub: 'alice-1',
      client_id: 'gateway-ref',
      scope: 'orders.read',
      act: { sub: 'svc-b' },
      amr: ['pwd'],
    })
  })
})

describe('token exchange: errors', () => {
  it('invalid_request for missing or unsupported parameters', async () => {
    const subject = (await userToken()).access_token
    const actor = await serviceToken('svc-a')
    const cases: Array<[Record<string, string>, string]> = [
      [{ subject_token_type: AT }, 'subject_token is missing or invalid'],
      [{ subject_token: subject }, 'subject_token_type is missing or invalid'],
      [{ subject_token: subject, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }, 'subject_token_type is not supported'],
      [{ subject_token: subject, subject_token_type: AT, actor_token: actor }, 'actor_token_type is required with actor_token'],
      [{ subject_token: subject, subject_token_type: AT, actor_token_type: AT }, 'actor_token_type is sent without actor_token'],
      [
        { subject_token: subject, subject_token_type: AT, actor_token: actor, actor_token_type: 'urn:ietf:params:oauth:token-type:jwt' },
        'actor_token_type is not supported',
      ],
      [
        { subject_token: subject, subject_token_type: AT, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
        'requested_token_type is not supported',
      ],
    ]
    for (const [params, description] of cases)
      expectError(await exchange(params), 400, { error: 'invalid_request', error_description: description })
  })

  it('invalid_request for a subject or actor token that is not an active access token of ours', async () => {
    const issued = await userToken()
    const live = issued.access_token
    const revokedJwt = (await userToken()).access_token
    const revokedRef = (await userToken('web-ref', 'orders.read')).access_token
    for (const [tok, owner] of [
      [revokedJwt, 'web'],
      [revokedRef, 'web-ref'],
    ] as const) {
      const r = await postFormBasic(authz.app, '/connect/revocation', { token: tok }, owner, `${owner}-secret`)
      expect(r.statusCode).toBe(200)
    }
    const { privateKey } = await generateKeyPair('ES256')
    const forged = await new SignJWT({ ...decodeJwt(live) }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'x' }).sign(privateKey)
    const tampered = `${live.split('.')[0]}.${Buffer.from(JSON.stringify({ ...decodeJwt(live), scope: 'billing.read' })).toString('base64url')}.${live.split('.')[2]}`
    const bad = {
      refresh: issued.refresh_token!,
      idToken: issued.id_token!,
      revokedJwt,
      revokedRef,
      forged,
      tampered,
      random: 'no-such-token',
      huge: 'x'.repeat(5000),
    }
    const answer = (r: Awaited<ReturnType<typeof exchange>>) => ({
      status: r.statusCode,
      cacheControl: r.headers['cache-control'],
      body: r.json(),
    })
    const asSubject: Record<string, unknown> = {}
    const asActor: Record<string, unknown> = {}
    for (const [name, tok] of Object.entries(bad)) {
      asSubject[name] = answer(await exchange({ subject_token: tok, subject_token_type: AT }))
      asActor[name] = answer(await exchange({ subject_token: live, subject_token_type: AT, actor_token: tok, actor_token_type: AT }))
    }
    const refused = (param: string) => ({
      status: 400,
      cacheControl: 'no-store',
      body: { error: 'invalid_request', error_description: `${param} is not an active access token of this server` },
    })
    expect(asSubject).toEqual(Object.fromEntries(Object.keys(bad).map((n) => [n, refused('subject_token')])))
    expect(asActor).toEqual(Object.fromEntries(Object.keys(bad).map((n) => [n, refused('actor_token')])))
    expect((await exchange({ subject_token: live, subject_token_type: AT })).statusCode).toBe(200)
  })

  it('invalid_request for an expired subject or actor token', async () => {
    const subject = (await userToken('web-short', 'orders.read')).access_token
    const actor = (await userToken('web-short', 'orders.read')).access_token
    const live = (await userToken()).access_token
    authz.clock.advance(60)
    expectError(await exchange({ subject_token: subject, subject_token_type: AT }), 400, {
      error: 'invalid_request',
      error_description: 'subject_token is not an active access token of this server',
    })
    expectError(await exchange({ subject_token: live, subject_token_type: AT, actor_token: actor, actor_token_type: AT }), 400, {
      error: 'invalid_request',
      error_description: 'actor_token is not an active access token of this server',
    })
  })

  it('invalid_scope for a scope wider than the subject token, or none the client may have', async () => {
    const subject = (await userToken('web', 'openid orders.read')).access_token
    expectError(await exchange({ subject_token: subject, subject_token_type: AT, scope: 'orders.read orders.write' }), 400, {
      error: 'invalid_scope',
      error_description: 'scope exceeds the scope of the subject_token',
    })
    expectError(await exchange({ subject_token: subject, subject_token_type: AT, scope: 'billing.read' }), 400, {
      error: 'invalid_scope',
      error_description: 'scope exceeds the scope of the subject_token',
    })
    const openidOnly = (await userToken('web', 'openid profile')).access_token
    expectError(await exchange({ subject_token: openidOnly, subject_token_type: AT }, ['svc-a', 'svc-a-secret']), 400, {
      error: 'invalid_scope',
      error_description: 'the client may have none of the scopes of the subject_token',
    })
    // A scope the subject token has but the client may not have.
    expectError(await exchange({ subject_token: openidOnly, subject_token_type: AT, scope: 'profile' }), 400, {
      error: 'invalid_scope',
      error_description: 'scope holds a value this client may not request',
    })
  })

  it('invalid_target for an unknown audience, one that takes none of the scopes, and audience and resource that differ', async () => {
    const subject = (await userToken()).access_token
    expectError(await exchange({ subject_token: subject, subject_token_type: AT, audience: 'nowhere' }), 400, {
      error: 'invalid_target',
      error_description: 'unknown resource',
    })
    expectError(await exchange({ subject_token: subject, subject_token_type: AT, audience: 'billing-api' }), 400, {
      error: 'invalid_target',
      error_description: 'the resource accepts none of the requested scopes',
    })
    expectError(await exchange({ subject_token: subject, subject_token_type: AT, audience: 'orders-api', resource: 'billing-api' }), 400, {
      error: 'invalid_target',
      error_description: 'audience and resource name different targets',
    })
  })

  it('unauthorized_client for a client that does not list the grant type, and for public clients', async () => {
    const subject = (await userToken()).access_token
    expectError(await exchange({ subject_token: subject, subject_token_type: AT }, ['no-exchange', 'ne-secret']), 400, {
      error: 'unauthorized_client',
      error_description: 'the client may not use this grant type',
    })
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: TE,
      client_id: 'spa',
      subject_token: subject,
      subject_token_type: AT,
    })
    expectError(res, 400, { error: 'unauthorized_client', error_description: 'public clients may not use this grant type' })
  })

  it('never logs the subject or actor token', async () => {
    const subject = (await userToken()).access_token
    const actor = await serviceToken('svc-a')
    authz.logs.length = 0
    await exchange({ subject_token: subject, subject_token_type: AT, actor_token: actor, actor_token_type: 'bad' })
    await exchange({ subject_token: subject, subject_token_type: AT, actor_token: actor, actor_token_type: AT })
    expect(authz.logs.length).toBeGreaterThan(0)
    expect(authz.logs.join('\n')).not.toContain(subject.split('.')[2])
    expect(authz.logs.join('\n')).not.toContain(actor.split('.')[2])
  })
})

describe('discovery', () => {
  it('lists every grant type that works, and nothing more', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc.grant_types_supported).toEqual([
      'client_credentials',
      'refresh_token',
      'password',
      'urn:openid:params:grant-type:ciba',
      'urn:ietf:params:oauth:grant-type:device_code',
      'authorization_code',
      TE,
    ])
  })
})
