// CIBA with a real client library (oauth4webapi's backchannel authentication functions) against
// a listening server: discovery, the request, pending, approval, and the library's own
// validation of the token response and ID token.
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cibaCommand } from '../../src/cli/ciba.js'
import type { CliContext } from '../../src/cli/context.js'
import { createCibaTestApp, type CibaTestApp } from '../flows/ciba/harness.js'

let authz: CibaTestApp
let as: oauth.AuthorizationServer
const insecure = { [oauth.allowInsecureRequests]: true }
const client: oauth.Client = { client_id: 'bank' }
const auth = oauth.ClientSecretPost('bank-secret')

beforeAll(async () => {
  authz = await createCibaTestApp({ listen: true })
  const issuer = new URL(authz.baseUrl)
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }))
})
afterAll(() => authz?.close())

async function grant(authReqId: string) {
  const res = await oauth.backchannelAuthenticationGrantRequest(as, client, auth, authReqId, insecure)
  return oauth.processBackchannelAuthenticationGrantResponse(as, client, res)
}

describe('oauth4webapi CIBA', () => {
  it('runs the poll flow end to end', async () => {
    expect(as.backchannel_authentication_endpoint).toBe(`${authz.baseUrl}/connect/ciba`)
    const started = await oauth.processBackchannelAuthenticationResponse(
      as,
      client,
      await oauth.backchannelAuthenticationRequest(
        as,
        client,
        auth,
        new URLSearchParams({ scope: 'openid email', login_hint: 'alice', binding_message: 'OK-1' }),
        insecure,
      ),
    )
    expect(started).toMatchObject({ expires_in: 120, interval: 5 })

    const pending = await grant(started.auth_req_id).catch((e: unknown) => e)
    expect(pending).toBeInstanceOf(oauth.ResponseBodyError)
    expect((pending as oauth.ResponseBodyError).error).toBe('authorization_pending')

    // The operator approves from the CLI (same decision as the page).
    const out: string[] = []
    const ctx = {
      out: (l: string) => void out.push(l),
      err: () => {},
      clock: authz.clock,
      db: async () => authz.db,
    } as unknown as CliContext
    await cibaCommand.run(['approve', authz.notifications.at(-1)!.request_id], ctx)
    expect(out[0]).toMatch(/^approved request /)

    authz.clock.advance(5)
    const tokens = await grant(started.auth_req_id)
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'openid email', expires_in: 3600 })
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({
      iss: authz.baseUrl,
      sub: 'u-alice',
      aud: 'bank',
      email: 'alice@example.com',
    })

    authz.clock.advance(5)
    const replay = await grant(started.auth_req_id).catch((e: unknown) => e)
    expect((replay as oauth.ResponseBodyError).error).toBe('invalid_grant')
  })
})
