// One handler per grant_type (RFC 6749 §4, §4.5 extension grants; docs/extending.md "Adding a grant type").
// The token service looks the handler up, checks the client may use it, and passes it only the
// parameters its schema declares. Extension grants are GrantFactory functions listed in
// src/flows/token/grants/extensions.ts (a fork) or passed to buildApp as `grants` (an embedding).
import type { z } from 'zod'
import type { Config } from '../config.js'
import type { Clock } from '../domain/clock.js'
import type { AuthenticatedClient, Client } from '../domain/types.js'
import type { UserStore } from '../stores/users.js'
import type { TokenIssuer, TokenResponse } from '../tokens/issuer.js'
import type { TokenReader } from '../tokens/token-reader.js'
import type { DPoPProof } from '../tokens/dpop.js'
import type { OneTimeUse } from './one-time-use.js'
import type { AuditSink } from '../observe/audit.js'
import type { ScopeResolver } from './scopes.js'

/** About the request, beyond the client and its parameters. */
export interface GrantContext {
  /** The source address (req.ip, X-Forwarded-For when TRUST_PROXY), for throttling and logs. */
  address: string
  /** The request's id (X-Request-Id), for audit events. */
  requestId?: string
  /**
   * How the client authenticated this request (set by the token service): a grant that must tell
   * a repeat of the same request from another party's (the authorization code) compares these.
   */
  clientAuthentication?: Pick<AuthenticatedClient, 'method' | 'credentialDigest'>
  /**
   * The request's DPoP proof, checked (RFC 9449 §5; set by the token endpoint). A grant passes its
   * `jkt` to the issuer as `dpopJkt`, so that what it issues is bound to the key.
   */
  dpop?: DPoPProof
}

export interface GrantHandler<P = unknown> {
  /** The grant_type value: a name of RFC 6749 or an absolute URI (§4.5). */
  readonly grantType: string
  /** Its parameters; every other form parameter is dropped. A failed parse is invalid_request. */
  readonly params: z.ZodType<P>
  /** Public clients (token_endpoint_auth_method none) may use this grant. Never client_credentials. */
  readonly allowPublicClients?: boolean
  // A method, not a function-typed property: a GrantHandler<P> of any P is then a GrantHandler
  // (of unknown), which is how the registry holds them; the token service passes `handle` only
  // what `params` parsed.
  handle(client: Client, params: P, ctx: GrantContext): Promise<TokenResponse>
}

/** What buildApp hands every GrantFactory. */
export interface GrantDeps {
  config: Config
  clock: Clock
  /** Scope and resource validation (invalid_scope, invalid_target), as every grant does it. */
  scopes: ScopeResolver
  /** Issues the token response: access token, and ID and refresh tokens when asked. */
  tokenIssuer: TokenIssuer
  users: Pick<UserStore, 'findBySubjectId' | 'findByUsername'>
  /** Reads tokens we issued: active access tokens (JWT or reference) and refresh tokens. */
  tokenReader: TokenReader
  /** Use once, revoke the family: for a grant that redeems a one-time artefact (one-time-use.ts). */
  oneTimeUse: OneTimeUse
  /** Audit events (docs/operate.md "Audit events"); token.issued is emitted for every grant already. */
  audit: AuditSink
}

/** How an extension grant is registered: a function from the server's services to its handler. */
export type GrantFactory = (deps: GrantDeps) => GrantHandler

export interface GrantRegistry {
  /** Adds a handler; a grant_type registered twice is a programming error (thrown at start). */
  add(handler: GrantHandler): void
  get(grantType: string): GrantHandler | undefined
  /** For discovery's grant_types_supported. */
  grantTypes(): string[]
}

export function createGrantRegistry(handlers: GrantHandler[] = []): GrantRegistry {
  const byType = new Map<string, GrantHandler>()
  const add = (h: GrantHandler) => {
    if (byType.has(h.grantType)) throw new Error(`grant type registered twice: ${h.grantType}`)
    byType.set(h.grantType, h)
  }
  handlers.forEach(add)
  return {
    add,
    get: (grantType) => byType.get(grantType),
    grantTypes: () => [...byType.keys()],
  }
}
