// Issues the token endpoint's response for every grant: RFC 9068 JWT access tokens or reference
// tokens (RFC 6749 §1.4, stored by hash), OIDC Core §2 / §3.1.3.6 ID tokens, RFC 6749 §6 refresh
// tokens. JWT access tokens cost no database write unless they belong to a grant family.
// With a familyId every stored token of the response (the access token, or its jti, and the
// refresh token) goes into the family in one statement that refuses a revoked family
// (GrantStore.issueIntoFamily): then nothing is returned and the answer is invalid_grant, so a
// token signed by a request that lost a race with a revocation never leaves the server.
import { isAdminScope } from '../domain/admin-scopes.js'
import { createHash, randomUUID } from 'node:crypto'
import type { Config } from '../config.js'
import type { Clock } from '../domain/clock.js'
import { idTokenSigningAlgFor } from '../domain/client-profile.js'
import { absoluteRefreshTokenLifetime, isPublicClient } from '../domain/public-client.js'
import type { Client, ResolvedScopes, User } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { FamilyGrant, GrantStore } from '../stores/grants.js'
import type { ResourceStore } from '../stores/resources.js'
import type { UserStore } from '../stores/users.js'
import { newHandle } from './handles.js'
import type { SigningKeyService } from '../keys/signing-keys.js'

export interface IssueParams {
  client: Client
  /** undefined: client_credentials, sub = client_id */
  subjectId?: string
  granted: ResolvedScopes
  /** tenant, acr, amr, idp, auth_time… copied into the access token */
  claims?: Record<string, unknown>
  /**
   * The grant family (see grants/one-time-use.ts); when set, JWT access tokens are recorded too
   * (kind jwt_access_token, handle = jti) so that revoking the family revokes them, and nothing is
   * issued into a revoked family.
   */
  familyId?: string
  /** OIDC Core §2: iss sub aud exp iat auth_time at_hash + user claims per granted identity scopes (unless the client leaves them to userinfo) */
  idToken?: {
    user: User
    authTime: number
    nonce?: string
    acr?: string
    amr?: string[]
    extraClaims?: Record<string, unknown>
    /**
     * OpenID CIBA Core 1.0 §10.3.1: an ID token pushed to the client carries the auth_req_id it
     * answers, and the hash of the refresh token pushed with it. Never kept for later ID tokens.
     */
    cibaPush?: { authReqId: string }
  }
  /** issue one (only when offline_access granted and client.allowOfflineAccess) */
  refreshToken?: boolean
  /**
   * The grant the refresh token carries, when it differs from the access token's: on refresh, the
   * original grant (RFC 6749 §6: the new refresh token has the scope of the old one), while
   * `granted` is what this request narrowed the access token to. Default: `granted`.
   */
  refreshGranted?: ResolvedScopes
  /** Refresh token rotation: the absolute expiry (ms) inherited from the first token of the family. */
  refreshAbsoluteExpiresAt?: number
  /** Refresh token rotation: when the family began (ms); a public client's cap counts from it. */
  refreshStartedAt?: number
  /** Seconds; caps the access token's lifetime (token exchange: the subject token's remaining life). */
  maxLifetime?: number
  /**
   * The thumbprint of the request's DPoP key (RFC 9449 §5, §6): the access token is bound to it
   * (cnf.jkt, token_type DPoP), and so is a public client's refresh token. A grant passes its
   * GrantContext's `dpop` here.
   */
  dpopJkt?: string | undefined
}

/**
 * What the issuer tells the token endpoint about a response, for the audit event and metrics:
 * a non-enumerable symbol property, so it never reaches the JSON body (nor a test's toEqual).
 * A grant that adds fields to the response does so with Object.assign, which keeps it.
 */
export const ISSUED = Symbol('authz.issued')

export interface IssuedSummary {
  /** The token's subject: the user, or undefined for the client itself (client_credentials). */
  subject: string | undefined
  accessTokenFormat: 'jwt' | 'reference'
}

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer' | 'DPoP'
  expires_in: number
  scope: string
  id_token?: string
  refresh_token?: string
  /** RFC 8693 §2.2.1 (token exchange). */
  issued_token_type?: string
  [ISSUED]?: IssuedSummary
}

/** What a refresh token row's `data` holds: enough to issue the next access token. */
export interface RefreshTokenData {
  granted: ResolvedScopes
  claims: Record<string, unknown>
  /** ms since epoch; undefined: no absolute bound (absoluteRefreshTokenLifetime 0). */
  absoluteExpiresAt: number | undefined
  /**
   * ms since epoch: when the family's first refresh token was issued, kept across rotations, so
   * that a public client's cap holds for a family that began under other rules (the client was
   * confidential, or PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME was longer). Absent in older tokens.
   */
  startedAt?: number
  /** What the next ID token repeats: the sign-in's auth_time, acr, amr, and claims such as sid, tenant, idp. */
  idToken?: { authTime: number; acr?: string; amr?: string[]; extraClaims?: Record<string, unknown> }
  /** RFC 9449 §5: a public client's refresh token is bound to its DPoP key; redeemed only with a proof of it. */
  jkt?: string
}

export interface TokenIssuer {
  issue(p: IssueParams): Promise<TokenResponse>
}

export interface TokenIssuerDeps {
  config: Pick<Config, 'issuer' | 'accessTokenSigningAlg' | 'accessTokenLifetime' | 'idTokenLifetime' | 'publicClientRefreshTokenLifetime'>
  clock: Clock
  keys: SigningKeyService
  grants: GrantStore
  users?: UserStore
  resources: ResourceStore
}

/** OIDC Core §3.1.3.6: base64url of the left half of SHA-256 of the access token (RS256/ES256/PS256). */
export function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url')
}

function audClaim(audiences: string[]): string | string[] | undefined {
  return audiences.length === 0 ? undefined : audiences.length === 1 ? audiences[0] : audiences
}

export function createTokenIssuer(deps: TokenIssuerDeps): TokenIssuer {
  const { config, clock, keys, grants } = deps

  /** The access token, and the row to store for it (none for a JWT outside a family). */
  async function accessToken(p: IssueParams, iat: number, lifetime: number): Promise<{ value: string; row?: FamilyGrant }> {
    const { client, granted } = p
    const jti = randomUUID()
    // Registered claims last so that custom claims can never override them.
    const payload: Record<string, unknown> = {
      ...p.claims,
      iss: config.issuer,
      sub: p.subjectId ?? client.clientId,
      client_id: client.clientId,
      aud: audClaim(granted.audiences),
      scope: granted.scopes.join(' '),
      jti,
      iat,
      nbf: iat,
      exp: iat + lifetime,
    }
    // RFC 9449 §6.1: the key the token is bound to; a reference token keeps it in its row.
    if (p.dpopJkt !== undefined) payload.cnf = { jkt: p.dpopJkt }
    else delete payload.cnf
    // RFC 9068 §2.2: aud is required. A token for no API resource but with identity scopes is for
    // our own userinfo endpoint, one with an admin scope for our own admin API: its audience is
    // the issuer itself.
    if (payload.aud === undefined && (granted.identityScopes.length > 0 || granted.apiScopes.some(isAdminScope)))
      payload.aud = config.issuer
    if (payload.aud === undefined) delete payload.aud
    const expiresAt = (iat + lifetime) * 1000
    if (client.accessTokenType === 'reference') {
      const handle = newHandle()
      const row = {
        handle,
        kind: 'reference_token' as const,
        clientId: client.clientId,
        subjectId: p.subjectId,
        data: payload,
        createdAt: iat * 1000,
        expiresAt,
      }
      if (p.familyId !== undefined) return { value: handle, row }
      // No family (client_credentials): the hot path, one group-committed insert (db/batcher.ts).
      await grants.store({ ...row, familyId: jti })
      return { value: handle }
    }
    const jwt = await keys.sign(payload, { alg: config.accessTokenSigningAlg, typ: 'at+jwt' })
    if (p.familyId === undefined) return { value: jwt } // no family: no database write at all
    return {
      value: jwt,
      row: {
        handle: jti,
        kind: 'jwt_access_token',
        clientId: client.clientId,
        subjectId: p.subjectId,
        data: { jti },
        createdAt: iat * 1000,
        expiresAt,
      },
    }
  }

  /** The user's claims that the granted identity scopes release (their identity resources' claims). */
  async function claimsOfScopes(user: User, identityScopes: string[]): Promise<Record<string, unknown>> {
    const cat = await deps.resources.loadCatalogue()
    const out: Record<string, unknown> = {}
    for (const scope of identityScopes) {
      for (const c of cat.identityResources.get(scope)?.claims ?? []) {
        if (user.claims[c] !== undefined) out[c] = user.claims[c]
      }
    }
    return out
  }

  async function idToken(p: IssueParams, accessTokenValue: string, iat: number, refreshTokenValue?: string): Promise<string | undefined> {
    const it = p.idToken
    if (!it || !p.granted.identityScopes.includes('openid')) return undefined
    // OIDC Core §5.4: an access token is always issued with the ID token here, so the user's claims
    // may be left to userinfo; alwaysIncludeUserClaimsInIdToken false does that, and the ID token
    // then carries the protocol claims and the sign-in's (sid, tenant, idp) only.
    const userClaims = p.client.alwaysIncludeUserClaimsInIdToken ? await claimsOfScopes(it.user, p.granted.identityScopes) : {}
    const payload: Record<string, unknown> = {
      ...userClaims,
      ...it.extraClaims,
      iss: config.issuer,
      sub: it.user.subjectId,
      aud: p.client.clientId,
      iat,
      exp: iat + config.idTokenLifetime,
      auth_time: it.authTime,
      at_hash: atHash(accessTokenValue),
    }
    if (it.nonce !== undefined) payload.nonce = it.nonce
    if (it.acr !== undefined) payload.acr = it.acr
    if (it.amr !== undefined) payload.amr = it.amr
    if (it.cibaPush) {
      payload['urn:openid:params:jwt:claim:auth_req_id'] = it.cibaPush.authReqId
      // §10.3.1: rt_hash is computed as at_hash is, over the refresh token.
      if (refreshTokenValue !== undefined) payload['urn:openid:params:jwt:claim:rt_hash'] = atHash(refreshTokenValue)
    }
    return keys.sign(payload, { alg: idTokenSigningAlgFor(p.client), typ: 'JWT' })
  }

  const wantsRefresh = (p: IssueParams) =>
    p.refreshToken === true && (p.refreshGranted ?? p.granted).offlineAccess && p.client.allowOfflineAccess

  /** A new refresh token and its row (issued into the family with the access token). */
  function refreshToken(p: IssueParams, now: number): { value: string; row: FamilyGrant } | undefined {
    const { client } = p
    if (!wantsRefresh(p)) return undefined
    // Kept across rotations: the family's first token fixed it.
    const lifetime = absoluteRefreshTokenLifetime(client, config.publicClientRefreshTokenLifetime)
    let absolute = p.refreshAbsoluteExpiresAt ?? (lifetime === undefined ? undefined : now + lifetime * 1000)
    const startedAt = p.refreshStartedAt ?? now
    // A public client's family that began before the cap was lowered, or while the client was
    // confidential, comes under the cap counted from its start, not from this rotation.
    if (isPublicClient(client)) absolute = Math.min(absolute ?? Infinity, startedAt + config.publicClientRefreshTokenLifetime * 1000)
    let expiresAt = absolute
    if (client.refreshTokenExpiration === 'sliding' && client.slidingRefreshTokenLifetime > 0) {
      const sliding = now + client.slidingRefreshTokenLifetime * 1000
      expiresAt = absolute === undefined ? sliding : Math.min(sliding, absolute)
    }
    const data: RefreshTokenData = {
      granted: p.refreshGranted ?? p.granted,
      claims: p.claims ?? {},
      absoluteExpiresAt: absolute,
      startedAt,
    }
    // §5: a confidential client's refresh tokens are bound by its authentication already.
    if (p.dpopJkt !== undefined && isPublicClient(client)) data.jkt = p.dpopJkt
    if (p.idToken)
      data.idToken = { authTime: p.idToken.authTime, acr: p.idToken.acr, amr: p.idToken.amr, extraClaims: p.idToken.extraClaims }
    const handle = newHandle()
    return {
      value: handle,
      row: {
        handle,
        kind: 'refresh_token',
        clientId: client.clientId,
        subjectId: p.subjectId,
        data: data as unknown as Record<string, unknown>,
        createdAt: now,
        expiresAt,
      },
    }
  }

  return {
    async issue(params) {
      // A refresh token starts a family: the access tokens issued with it belong to it too.
      const p = params.familyId === undefined && wantsRefresh(params) ? { ...params, familyId: randomUUID() } : params
      const now = clock.now()
      const iat = Math.floor(now / 1000)
      const lifetime = Math.min(p.client.accessTokenLifetime ?? config.accessTokenLifetime, p.maxLifetime ?? Infinity)
      const access = await accessToken(p, iat, lifetime)
      const res: TokenResponse = {
        access_token: access.value,
        token_type: p.dpopJkt === undefined ? 'Bearer' : 'DPoP',
        expires_in: lifetime,
        scope: p.granted.scopes.join(' '),
      }
      const summary: IssuedSummary = {
        subject: p.subjectId,
        accessTokenFormat: p.client.accessTokenType === 'reference' ? 'reference' : 'jwt',
      }
      Object.defineProperty(res, ISSUED, { value: summary, enumerable: false })
      // Skipped outright on the client_credentials hot path (no extra promises).
      const rt = p.refreshToken ? refreshToken(p, now) : undefined
      const id = p.idToken ? await idToken(p, access.value, iat, rt?.value) : undefined
      if (id !== undefined) res.id_token = id
      if (rt !== undefined) res.refresh_token = rt.value
      if (p.familyId !== undefined) {
        const rows = [access.row!, ...(rt ? [rt.row] : [])]
        if (!(await grants.issueIntoFamily(p.familyId, rows, now))) throw new OAuthError('invalid_grant', 'the grant has been revoked')
      }
      return res
    },
  }
}
