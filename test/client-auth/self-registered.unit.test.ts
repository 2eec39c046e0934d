// One set of settings for the clients strangers describe: the same metadata registered by
// Dynamic Client Registration (RFC 7591) and published as a Client ID Metadata Document makes the
// same client, but for its id and how it came to be.
import { describe, expect, it } from 'vitest'
import { clientFromDocument } from '../../src/client-auth/metadata-document.js'
import { readMetadata } from '../../src/flows/registration/metadata.js'
import { registeredClient } from '../../src/flows/registration/service.js'
import type { Client } from '../../src/domain/types.js'

const ALLOWED = ['openid', 'profile', 'offline_access', 'tools.read']
const DOC_ID = 'https://agent.example/oauth/client.json'

/** The client each path makes of `metadata`: a public registration, and a document at DOC_ID. */
function bothPaths(metadata: Record<string, unknown>): { registered: Client; described: Client } {
  const registered = registeredClient('reg-1', readMetadata(metadata, { allowedScopes: ALLOWED }), undefined)
  const described = clientFromDocument(DOC_ID, Buffer.from(JSON.stringify({ ...metadata, client_id: DOC_ID })), ALLOWED)
  return { registered, described }
}

const apart = (c: Client) => {
  const { clientId: _id, selfRegistered: _how, ...rest } = c
  return rest
}

describe('a registered client and a metadata document client', () => {
  it.each([
    [
      'a code client with refresh tokens and a scope',
      {
        client_name: 'Agent',
        redirect_uris: ['https://agent.example/cb', 'http://127.0.0.1:9/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        scope: 'openid tools.read',
      },
    ],
    [
      'no scope and no refresh tokens: the same default scopes, offline_access left out',
      { redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'none' },
    ],
  ])('are the same client for the same metadata: %s', (_what, metadata) => {
    const { registered, described } = bothPaths(metadata)
    expect(registered.selfRegistered).toBe('registration')
    expect(described.selfRegistered).toBe('metadata-document')
    expect(apart(registered)).toEqual(apart(described))
  })

  it('get the settings nobody chose: PKCE, consent, one-time refresh tokens, no CIBA, CORS for a public client', () => {
    const { registered } = bothPaths({
      client_name: 'Agent',
      redirect_uris: ['https://agent.example/cb', 'http://127.0.0.1:9/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    })
    expect(registered).toEqual({
      clientId: 'reg-1',
      clientName: 'Agent',
      enabled: true,
      secrets: [],
      requireClientSecret: false,
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ALLOWED,
      redirectUris: ['https://agent.example/cb', 'http://127.0.0.1:9/cb'],
      postLogoutRedirectUris: [],
      requirePkce: true,
      allowOfflineAccess: true,
      accessTokenType: 'jwt',
      accessTokenLifetime: undefined,
      refreshTokenUsage: 'oneTimeOnly',
      refreshTokenExpiration: 'absolute',
      absoluteRefreshTokenLifetime: 2_592_000,
      slidingRefreshTokenLifetime: 1_296_000,
      cibaLifetime: undefined,
      pollingInterval: undefined,
      identityProviderRestrictions: [],
      enableLocalLogin: true,
      allowedTenants: [],
      allowedCorsOrigins: ['https://agent.example', 'http://127.0.0.1:9'],
      allowedSubjectTokenClients: [],
      allowedExchangeAudiences: [],
      backChannelLogoutUri: undefined,
      backChannelLogoutSessionRequired: true,
      requireConsent: true,
      alwaysIncludeUserClaimsInIdToken: true,
      jwks: undefined,
      jwksUri: undefined,
      tokenEndpointAuthMethod: 'none',
      backchannelTokenDeliveryMode: 'poll',
      backchannelClientNotificationEndpoint: undefined,
      requirePushedAuthorization: false,
      requireRequestObject: false,
      requireDPoP: false,
      requireMfa: false,
      selfRegistered: 'registration',
    })
  })
})
