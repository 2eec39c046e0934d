// Tells what a token presented to us is, for introspection (RFC 7662) and token exchange
// (RFC 8693 §2.1 subject_token / actor_token): an active access token of ours (RFC 9068 JWT or
// reference handle) with its claims, or an unexpired refresh token row; anything else, nothing.
// JWT access tokens are verified once and cached by their exact string (bounded), then checked
// against the clock and the in-memory revocation list on every call: no database read. Handles
// cost one indexed lookup by hash (a handle hash is unique across kinds).
// A token is alive only while the client it was issued to is enabled and the user it speaks for
// is enabled, as Duende revalidates both (client enabled, IProfileService.IsActive): a disabled or
// deleted client or user makes its tokens nothing, wherever they are judged. Both answers come
// from the caches of stores/cached.ts, so the hot path stays off the database; a change reaches
// every replica at once by NOTIFY (within CLIENT_CACHE_TTL should it be missed).
import type { Config } from '../config.js'
import type { Clock } from '../domain/clock.js'
import { isUnavailable } from '../errors.js'
import type { PersistedGrant } from '../domain/types.js'
import type { ClientStore } from '../stores/clients.js'
import type { GrantStore } from '../stores/grants.js'
import type { UserStore } from '../stores/users.js'
import type { SigningKeyService } from '../keys/signing-keys.js'

export type ReadToken =
  /**
   * Signature (or stored row), issuer, expiry, nbf and revocation checked. A reference token's
   * row names its grant family; a JWT's is looked up only when asked (familyOf).
   */
  | { kind: 'access_token'; format: 'jwt' | 'reference'; claims: Record<string, unknown>; familyId?: string }
  /** Unexpired; consumed or not (the caller decides what a consumed one means). */
  | { kind: 'refresh_token'; grant: PersistedGrant }

export type ReadAccessToken = Extract<ReadToken, { kind: 'access_token' }>

export interface TokenReader {
  /** What `token` is, or undefined when it is nothing of ours that is still alive. */
  read(token: string): Promise<ReadToken | undefined>
  /**
   * The grant family an access token just read was issued into (a token issued from it, as by
   * RFC 8693 token exchange, joins it so that revoking the grant reaches it too): familyId
   * undefined for a JWT of no family (a client's own; a client's own reference token is a family
   * of one), undefined when a JWT has been revoked since read() (on another replica, say). A JWT
   * costs one database read; a reference token none.
   */
  familyOf(token: ReadAccessToken): Promise<{ familyId: string | undefined } | undefined>
}

export interface TokenReaderDeps {
  config: Pick<Config, 'issuer'>
  clock: Clock
  keys: Pick<SigningKeyService, 'verify'>
  grants: Pick<GrantStore, 'find' | 'findJwtFamily'>
  /** The revoked JWT jtis still in force (the replica's in-memory revocation list). */
  revocations: { has(jti: string): boolean }
  /** Cached (CLIENT_CACHE_TTL): whose tokens are still alive. */
  clients: Pick<ClientStore, 'findById'>
  users: Pick<UserStore, 'isEnabled'>
  cacheSize?: number
}

export const JWT_CACHE_SIZE = 10_000

/** Cheap shape test: compact JWS has exactly two dots; our handles have none. */
export function looksLikeJwt(token: string): boolean {
  const a = token.indexOf('.')
  const b = a < 0 ? -1 : token.indexOf('.', a + 1)
  return b > 0 && token.indexOf('.', b + 1) === -1
}

/** Our handles are 43 characters; anything much longer is not worth a lookup. */
const MAX_HANDLE_LENGTH = 100

export function createTokenReader(deps: TokenReaderDeps): TokenReader {
  const { config, clock } = deps
  // Two generations of at most half the size each, instead of deleting the oldest key of one Map:
  // V8 leaves deleted entries as holes that keys().next() walks past, measured at ~10 µs per
  // eviction with 10,000 entries, i.e. on every request once tokens outnumber the cache.
  const generationSize = Math.max(1, Math.floor((deps.cacheSize ?? JWT_CACHE_SIZE) / 2))
  let young = new Map<string, Record<string, unknown>>()
  let old = new Map<string, Record<string, unknown>>()
  const remember = (token: string, payload: Record<string, unknown>) => {
    if (young.size >= generationSize) {
      old = young
      young = new Map()
    }
    young.set(token, payload)
  }

  /** Signature, typ at+jwt, iss; cached. Times are checked on every use. */
  async function verifyJwt(token: string): Promise<Record<string, unknown> | undefined> {
    const hit = young.get(token)
    if (hit) return hit
    const older = old.get(token)
    if (older) {
      remember(token, older) // still in use: keep it past the next generation change
      return older
    }
    let payload: Record<string, unknown>
    try {
      payload = (await deps.keys.verify(token, { typ: 'at+jwt' })).payload
    } catch {
      return undefined // malformed, unknown key, bad signature, wrong typ (an ID token, say)
    }
    if (payload.iss !== config.issuer || typeof payload.exp !== 'number' || typeof payload.jti !== 'string') return undefined
    remember(token, payload)
    return payload
  }

  /** Expired means expired: no clock-skew grace for our own tokens. */
  function alive(claims: Record<string, unknown>, nowSec: number): boolean {
    if (typeof claims.exp !== 'number' || claims.exp <= nowSec) return false
    if (typeof claims.nbf === 'number' && claims.nbf > nowSec) return false
    return !deps.revocations.has(claims.jti as string)
  }

  const clientEnabled = async (clientId: string) => (await deps.clients.findById(clientId))?.enabled === true

  /**
   * The client the token was issued to is enabled, and so is its subject: a user, or, when no user
   * has that subject, a client (RFC 9068 §2.2: a client's own token has sub = client_id, and a
   * token exchanged for it keeps that subject, RFC 8693 §2.1). The user is asked first even when
   * the subject is the client's own id: subject ids are an administrator's choice (seed file, CLI
   * --subject) and may equal a client id, and a token that could be either must not outlive a
   * disabled user of that subject. While the database is away and that answer is not cached,
   * such a token is judged as the client's own (as before users were asked about it), so a
   * client's tokens are still introspected from its cached record.
   */
  async function ownersActive(clientId: unknown, subject: unknown): Promise<boolean> {
    if (typeof clientId !== 'string' || !(await clientEnabled(clientId))) return false
    if (subject === undefined) return true
    if (typeof subject !== 'string') return false
    const own = subject === clientId
    const user = await deps.users.isEnabled(subject).catch((err: unknown) => {
      if (own && isUnavailable(err)) return undefined
      throw err
    })
    if (user !== undefined) return user
    return own || clientEnabled(subject)
  }

  async function readHandle(token: string, now: number): Promise<ReadToken | undefined> {
    const g = await deps.grants.find(token)
    if (!g || (g.expiresAt !== undefined && g.expiresAt <= now)) return undefined
    if (g.kind === 'reference_token') {
      if (!alive(g.data, Math.floor(now / 1000)) || !(await ownersActive(g.data.client_id, g.data.sub))) return undefined
      return { kind: 'access_token', format: 'reference', claims: g.data, familyId: g.familyId }
    }
    if (g.kind === 'refresh_token') return (await ownersActive(g.clientId, g.subjectId)) ? { kind: 'refresh_token', grant: g } : undefined
    return undefined
  }

  return {
    async read(token) {
      const now = clock.now()
      if (looksLikeJwt(token)) {
        const claims = await verifyJwt(token)
        if (!claims || !alive(claims, Math.floor(now / 1000)) || !(await ownersActive(claims.client_id, claims.sub))) return undefined
        return { kind: 'access_token', format: 'jwt', claims }
      }
      if (token.length > MAX_HANDLE_LENGTH) return undefined
      return readHandle(token, now)
    },
    async familyOf(token) {
      // A reference token's family came with its row; a revocation since then is caught by
      // GrantStore.issueIntoFamily, which refuses a revoked family.
      if (token.format === 'reference') return { familyId: token.familyId }
      const { familyId, revoked } = await deps.grants.findJwtFamily(token.claims.jti as string)
      return revoked ? undefined : { familyId }
    },
  }
}
