// A FAPI 2.0 client written with openid-client (v6) against a listening server, headless Chromium
// as the person: a client seeded with profile "fapi2" authenticates with private_key_jwt, pushes
// its request (PAR) with PKCE S256, signs the person in through our pages, and redeems the code
// with a DPoP proof: the tokens are DPoP-bound (token_type DPoP, cnf.jkt), and the ID token is
// signed with ES256, which the library verifies with our JWKS. Userinfo takes the access token
// with a proof and refuses it as a Bearer token; the refresh works with the proof and is refused
// without one. The steps are the ones docs/fapi.md prints.
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose'
import * as client from 'openid-client'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the FAPI 2.0 openid-client test')

let authz: Authz
let browser: Browser
let rp: Site
let clientKey: CryptoKeyPair

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Bank</title><h1>Bank</h1>')
  })
  clientKey = await generateKeyPair('ES256')
  authz = await startAuthz({
    identityResources: ['openid', 'profile', 'offline_access'],
    clients: [
      {
        clientId: 'bank',
        profile: 'fapi2',
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(clientKey.publicKey)), kid: 'bank-1', alg: 'ES256', use: 'sig' }] },
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'offline_access'],
        allowOfflineAccess: true,
        redirectUris: [`${rp.origin}/cb`],
      },
    ],
    users: [ALICE],
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

describe.skipIf(!haveChromium)('a FAPI 2.0 client with openid-client', () => {
  it('signs a person in with PAR, private_key_jwt and DPoP, and holds tokens a thief cannot use', async () => {
    const config = await client.discovery(
      new URL(authz.issuer),
      'bank',
      undefined,
      client.PrivateKeyJwt({ key: clientKey.privateKey, kid: 'bank-1' }),
      // allowInsecureRequests: http://127.0.0.1 only. enableNonRepudiationChecks: the ID token's
      // signature is verified with the server's JWKS.
      { execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] },
    )
    const dpopKeyPair = await client.randomDPoPKeyPair('ES256')
    const DPoP = client.getDPoPHandle(config, dpopKeyPair)

    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: `${rp.origin}/cb`,
      scope: 'openid profile offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    })
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])

    const page = await browser.newPage()
    await page.goto(url.href)
    await signInAs(page, ALICE, `${rp.origin}/cb?**`)
    const callback = new URL(page.url())
    await page.close()

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, {
      DPoP,
    })
    expect(tokens.token_type).toBe('dpop')
    const jkt = await calculateJwkThumbprint(await exportJWK(dpopKeyPair.publicKey))
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })
    expect(tokens.claims()).toMatchObject({ sub: ALICE.subjectId, aud: 'bank' })
    // FAPI 2.0 §5.4.1: never RS256.
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'ES256' })

    // Userinfo: with the DPoP handle it answers; the same token as a Bearer token is refused.
    const info = await client.fetchUserInfo(config, tokens.access_token, ALICE.subjectId, { DPoP })
    expect(info).toMatchObject({ sub: ALICE.subjectId, name: ALICE.claims.name })
    const bearer = await fetch(config.serverMetadata().userinfo_endpoint!, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(bearer.status).toBe(401)
    expect(bearer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token", /)

    // Refresh: with the key it works, and the new access token is bound to it again.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP })
    expect(refreshed.token_type).toBe('dpop')
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })

    // A stolen refresh token used without the DPoP key is refused.
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      status: 400,
      error: 'invalid_dpop_proof',
    })
  })
})
