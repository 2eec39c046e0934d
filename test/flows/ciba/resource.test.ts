// Resource indicators (RFC 8707) in CIBA: a backchannel authentication request that names a
// resource gets a token for that resource only, its `aud` exactly the resource's name and its
// scopes only that resource's; a poll that names one of the resources approved narrows the token
// to it (§2.2); a poll naming another is invalid_target and spends nothing.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { postForm } from '../../helpers/http.js'
import { decide, lastRequestId } from './approve-helper.js'
import { CIBA, createCibaTestApp, poll, startCiba, type CibaTestApp } from './harness.js'

const MCP = 'https://mcp.example.com/mcp'
const AGENT = { client_id: 'agent', client_secret: 'agent-secret' }

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'tools.read' }],
    apiResources: [{ name: MCP, scopes: ['tools.read'] }],
    clients: [
      {
        clientId: 'agent',
        secrets: [{ value: 'agent-secret' }],
        allowedGrantTypes: [CIBA],
        allowedScopes: ['openid', 'orders.read', 'tools.read'],
        pollingInterval: 5,
      },
    ],
  })
})
afterAll(() => authz.close())

/** A poll by `agent` with `extra` parameters (poll() sends none). */
const pollFor = (authReqId: string, extra: Record<string, string>) =>
  postForm(authz.app, '/connect/token', { ...AGENT, grant_type: CIBA, auth_req_id: authReqId, ...extra })

/** A request for alice by `agent`, approved by her; returns its auth_req_id. */
async function approved(params: Record<string, string>): Promise<string> {
  const res = await startCiba(authz, { ...AGENT, login_hint: 'alice', scope: 'openid orders.read tools.read', ...params })
  expect(res.statusCode, res.body).toBe(200)
  expect((await decide(authz, await lastRequestId(authz), 'approve')).statusCode).toBe(200)
  return res.json().auth_req_id as string
}

describe('CIBA with resource indicators', () => {
  it('gives a request that named a resource a token for it alone, with only its scopes', async () => {
    const token = await poll(authz, await approved({ resource: MCP }), AGENT)
    expect(token.statusCode, token.body).toBe(200)
    expect(decodeJwt(token.json().access_token)).toMatchObject({ aud: MCP, scope: 'openid tools.read', client_id: 'agent' })
    expect(token.json().scope).toBe('openid tools.read')
  })

  it('without a resource, is for every API its scopes reach; a poll naming one narrows to it', async () => {
    const authReqId = await approved({})
    const token = await pollFor(authReqId, { resource: 'orders-api' })
    expect(token.statusCode, token.body).toBe(200)
    expect(decodeJwt(token.json().access_token)).toMatchObject({ aud: 'orders-api', scope: 'openid orders.read' })
  })

  it('refuses a poll naming a resource the request did not cover, and the request still gives its token', async () => {
    const authReqId = await approved({ resource: MCP })
    const refused = await pollFor(authReqId, { resource: 'orders-api' })
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toEqual({ error: 'invalid_target', error_description: 'resource is not part of the grant' })
    authz.clock.advance(5)
    const token = await poll(authz, authReqId, AGENT)
    expect(token.statusCode, token.body).toBe(200)
    expect(decodeJwt(token.json().access_token)).toMatchObject({ aud: MCP, scope: 'openid tools.read' })
  })
})
