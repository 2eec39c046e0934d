// The one configuration both servers are given, so that every scenario asks the same question of
// each: same client ids and secrets (client_secret_basic), same API (audience, two scopes), same
// signing algorithm. bench/seed.json is our server's copy of these values; the peer builds its
// configuration from them in bench/peer-oidc-provider.ts. Probes before every run (scenarios.ts)
// fail the benchmark if the two ever drift apart.

export const JWT_CLIENT = { id: 'bench-jwt', secret: 'bench-jwt-secret-0123456789' } as const
export const REFERENCE_CLIENT = { id: 'bench-reference', secret: 'bench-reference-secret-0123456789' } as const
/** The API resource that introspects (ours: an API resource; the peer: a client, as it requires). */
export const API = { name: 'orders-api', secret: 'orders-api-secret-0123456789' } as const
export const API_SCOPES = ['orders.read', 'orders.write'] as const
/**
 * oidc-provider needs resource indicators to be absolute URIs (RFC 8707 §2); ours are API names.
 * The peer maps this indicator to audience `orders-api`, so both tokens carry the same `aud`.
 */
export const PEER_RESOURCE_INDICATOR = 'urn:bench:orders-api'
export const SIGNING_ALG = 'ES256'
export const ACCESS_TOKEN_LIFETIME = 3600

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before base64. */
export function basicAuth(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`
}
