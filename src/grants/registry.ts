// One handler per grant_type (RFC 6749 §4, §4.5 extension grants; STYLE.md "Grant handlers").
// The token service looks the handler up, checks the client may use it, and passes it only the
// parameters its schema declares.
import type { z } from 'zod'
import type { Client } from '../domain/types.js'
import type { TokenResponse } from '../tokens/issuer.js'

export interface GrantHandler<P = unknown> {
  readonly grantType: string
  readonly params: z.ZodType<P>
  /** Public clients (token_endpoint_auth_method none) may use this grant. Never client_credentials. */
  readonly allowPublicClients?: boolean
  handle(client: Client, params: P): Promise<TokenResponse>
}

export interface GrantRegistry {
  get(grantType: string): GrantHandler | undefined
  /** For discovery's grant_types_supported. */
  grantTypes(): string[]
}

export function createGrantRegistry(handlers: GrantHandler<any>[]): GrantRegistry {
  const byType = new Map<string, GrantHandler>()
  for (const h of handlers) {
    if (byType.has(h.grantType)) throw new Error(`grant type registered twice: ${h.grantType}`)
    byType.set(h.grantType, h)
  }
  const types = [...byType.keys()]
  return {
    get: (grantType) => byType.get(grantType),
    grantTypes: () => [...types],
  }
}
