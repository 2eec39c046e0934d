// The peer: oidc-provider 9, configured like our server for the benchmark (bench/fixture.ts).
// Run as its own process (bench/peer.ts pins it to the server CPU): PEER_PORT=… node --import tsx
// bench/peer-oidc-provider.ts. It keeps grants and opaque tokens in its default in-memory adapter,
// which favours it: no database I/O at all, where our server reads and writes PostgreSQL.
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { ACCESS_TOKEN_LIFETIME, API, API_SCOPES, JWT_CLIENT, PEER_RESOURCE_INDICATOR, REFERENCE_CLIENT, SIGNING_ALG } from './fixture.js'

const port = Number(process.env.PEER_PORT)
if (!Number.isInteger(port) || port <= 0) throw new Error('PEER_PORT must be a port number')
const issuer = `http://127.0.0.1:${port}`

/** A client_credentials client authenticating with client_secret_basic, as ours do. */
function serviceClient(c: { id: string; secret: string }) {
  return {
    client_id: c.id,
    client_secret: c.secret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    scope: API_SCOPES.join(' '),
  }
}

async function main() {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), alg: SIGNING_ALG, use: 'sig', kid: 'bench-es256' }

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    clients: [
      serviceClient(JWT_CLIENT),
      serviceClient(REFERENCE_CLIENT),
      // The API that introspects. oidc-provider only lets clients introspect; RFC 9701 responses
      // are signed for clients registered with introspection_signed_response_alg.
      {
        client_id: API.name,
        client_secret: API.secret,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: [],
        response_types: [],
        redirect_uris: [],
        introspection_signed_response_alg: SIGNING_ALG,
      },
    ],
    // Its only key is ES256, so ID-token-style JWTs (RFC 9701 responses use that machinery) must be too.
    clientDefaults: { id_token_signed_response_alg: SIGNING_ALG, introspection_signed_response_alg: SIGNING_ALG },
    scopes: ['openid', ...API_SCOPES],
    ttl: { ClientCredentials: ACCESS_TOKEN_LIFETIME },
    cookies: { keys: ['bench-cookie-key-not-used-by-these-endpoints'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Our rule: the API sees tokens carrying its scopes, a client its own.
        allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId: string }) =>
          client.clientId === API.name || client.clientId === token.clientId,
      },
      jwtIntrospection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => PEER_RESOURCE_INDICATOR,
        useGrantedResource: () => true,
        // Same audience and scopes as our API resource; JWT (ES256) for one client, opaque for the other.
        getResourceServerInfo: (_ctx: unknown, _indicator: string, client: { clientId: string }) => ({
          scope: API_SCOPES.join(' '),
          audience: API.name,
          accessTokenTTL: ACCESS_TOKEN_LIFETIME,
          accessTokenFormat: client.clientId === JWT_CLIENT.id ? 'jwt' : 'opaque',
          jwt: { sign: { alg: SIGNING_ALG } },
        }),
      },
    },
  })
  // A server_error would surface as a non-2xx in the load run; print its cause for the report.
  provider.on('server_error', (_ctx, err) => console.error('peer server_error:', err))
  const server = provider.listen(port, '127.0.0.1', () => console.log(`peer listening on ${issuer}`))
  const stop = () => server.close(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((err: unknown) => {
  console.error('peer failed to start:', err)
  process.exit(1)
})
