// RFC 6750 bearer tokens for the admin API: an access token of this server (its signature, expiry,
// revocation and the client's and user's state checked by the token reader, as everywhere) whose
// scope holds authz:admin, or authz:admin:read for reads (src/domain/admin-scopes.ts).
// §3: no credentials is 401 with a bare challenge; a malformed request 400 invalid_request; a token
// that is not (or no longer) valid 401 invalid_token; a valid one without the scope 403
// insufficient_scope, naming the scope needed. Problem details carry the same code in `detail`.
// RFC 9449 §7: a DPoP-bound token (cnf.jkt) is accepted only with `Authorization: DPoP` and a proof
// of its key naming it (ath), as at userinfo; as a Bearer token it is refused, and so is an
// unbound one sent as DPoP. Those refusals carry the DPoP challenge (§7.1).
import { createHash, timingSafeEqual } from 'node:crypto'
import { ADMIN_READ_SCOPE, ADMIN_SCOPE } from '../domain/admin-scopes.js'
import { OAuthError } from '../errors.js'
import { dpopChallenge, normalizeHtu, type DPoPProof } from '../tokens/dpop.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { AdminProblem } from './problem.js'

export type AdminNeed = 'read' | 'write'

type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope'

export function bearerChallenge(realm: string, error?: BearerError, scope?: string): string {
  const r = `Bearer realm="${realm.replace(/["\\]/g, '')}"`
  if (!error) return r
  return `${r}, error="${error}"${scope ? `, scope="${scope}"` : ''}`
}

/** What a request presents: its Authorization and DPoP headers, and for a proof's htm and htu its method and URL. */
export interface AdminCredentials {
  authorization: string | undefined
  dpop?: string | string[] | undefined
  method: string
  /** The URL the request was sent to (its Host header and path). */
  url: string
}

export type AdminAuthenticate = (presented: AdminCredentials, need: AdminNeed, address: string) => Promise<AdminCaller>

/** The caller the local CLI's credential stands for in audit events (src/admin/local-access.ts). */
export const LOCAL_CLI_CALLER = 'local-cli'

/**
 * The local listener's only credential: the random value the server wrote for the CLI of its own
 * DATA_DIR. Only its SHA-256 is kept, compared in constant time; the caller is LOCAL_CLI_CALLER
 * with authz:admin. The public listener never takes it, and the local one takes nothing else.
 */
export function createLocalAuth(deps: Pick<AdminDeps, 'realm' | 'audit'>, credential: string): AdminAuthenticate {
  const digest = (value: string) => createHash('sha256').update(value).digest()
  const expected = digest(credential)
  return async ({ authorization }, _need, address) => {
    const m = authorization === undefined ? null : /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
      if (m) deps.audit.emit({ event: 'admin.refused', address, reason: 'invalid_token' })
      throw new AdminProblem(401, "invalid_token: the credential is not this server's local one", {
        headers: { 'www-authenticate': bearerChallenge(deps.realm, m ? 'invalid_token' : undefined) },
      })
    }
    return { clientId: LOCAL_CLI_CALLER, canWrite: true }
  }
}

type DPoPError = 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce' | 'insufficient_scope'

/**
 * The URL a proof's htu is compared with: the request's host and path as the client addressed
 * them, with the scheme the proof names when it is http or https, since the listener speaks plain
 * HTTP and may sit behind a proxy that ends TLS (§4.3 item 9 compares scheme, host and path; the
 * host and path are what bind a proof to this API).
 */
function htuFor(requestUrl: string, proof: string | string[] | undefined): string {
  if (typeof proof !== 'string') return requestUrl
  try {
    const payload = JSON.parse(Buffer.from(proof.split('.')[1] ?? '', 'base64url').toString()) as unknown
    const htu = typeof payload === 'object' && payload !== null ? (payload as { htu?: unknown }).htu : undefined
    const scheme = typeof htu === 'string' ? normalizeHtu(htu)?.split(':')[0] : undefined
    return scheme === undefined ? requestUrl : requestUrl.replace(/^https?:/, `${scheme}:`)
  } catch {
    return requestUrl
  }
}

export function createAdminAuth(deps: Pick<AdminDeps, 'tokenReader' | 'realm' | 'audit' | 'dpop'>): AdminAuthenticate {
  const refuse = (status: number, detail: string, error?: BearerError, scope?: string) =>
    new AdminProblem(status, detail, { headers: { 'www-authenticate': bearerChallenge(deps.realm, error, scope) } })
  /** §7.1: a refusal of a DPoP-scheme request, or of a bound token, with the DPoP challenge. */
  const refuseDPoP = (error: DPoPError, detail: string, headers: Record<string, string> = {}) =>
    new AdminProblem(error === 'insufficient_scope' ? 403 : 401, `${error}: ${detail}`, {
      headers: { ...headers, 'www-authenticate': dpopChallenge(error) },
    })

  /** §7.1: the DPoP scheme needs a valid proof that names the token (ath). */
  async function proofOf(token: string, presented: AdminCredentials): Promise<DPoPProof> {
    let proof: DPoPProof | undefined
    try {
      proof = await deps.dpop.verify({
        header: presented.dpop,
        method: presented.method,
        url: htuFor(presented.url, presented.dpop),
        accessToken: token,
      })
    } catch (err) {
      if (err instanceof OAuthError && (err.code === 'invalid_dpop_proof' || err.code === 'use_dpop_nonce'))
        throw refuseDPoP(err.code, err.description ?? err.code, { ...err.headers })
      throw err
    }
    if (proof === undefined) throw refuseDPoP('invalid_dpop_proof', 'a DPoP proof is required with the DPoP scheme')
    return proof
  }

  return async function authenticate(presented, need, address) {
    const { authorization } = presented
    if (authorization === undefined) throw refuse(401, 'an access token is required (Authorization: Bearer)')
    const m = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
    if (!m) throw refuse(400, 'invalid_request: the Authorization header is not a Bearer or DPoP token', 'invalid_request')
    const token = m[2]!
    const dpopScheme = m[1]!.toLowerCase() === 'dpop'
    const refuseToken = (detail: string, clientId?: string) => {
      deps.audit.emit({ event: 'admin.refused', clientId, address, reason: 'invalid_token' })
      return dpopScheme ? refuseDPoP('invalid_token', detail) : refuse(401, `invalid_token: ${detail}`, 'invalid_token')
    }
    let proof: DPoPProof | undefined
    if (dpopScheme) {
      try {
        proof = await proofOf(token, presented)
      } catch (err) {
        if (err instanceof AdminProblem) deps.audit.emit({ event: 'admin.refused', address, reason: 'invalid_dpop_proof' })
        throw err
      }
    }
    const read = await deps.tokenReader.read(token)
    if (read?.kind !== 'access_token') throw refuseToken('the access token is not valid')
    const cnf = read.claims.cnf
    const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined
    if (typeof jkt === 'string') {
      if (proof === undefined) {
        deps.audit.emit({ event: 'admin.refused', address, reason: 'invalid_token' })
        throw refuseDPoP('invalid_token', 'the access token is bound to a DPoP key: present it with the DPoP scheme')
      }
      if (proof.jkt !== jkt) {
        deps.audit.emit({ event: 'admin.refused', address, reason: 'invalid_dpop_proof' })
        throw refuseDPoP('invalid_dpop_proof', 'the DPoP proof is not of the key the access token is bound to')
      }
    } else if (proof !== undefined) {
      throw refuseToken('the access token is not DPoP-bound: present it as a Bearer token')
    }
    const clientId = typeof read.claims.client_id === 'string' ? read.claims.client_id : undefined
    const scopes = typeof read.claims.scope === 'string' ? read.claims.scope.split(' ') : []
    const canWrite = scopes.includes(ADMIN_SCOPE)
    if (clientId === undefined || !(canWrite || (need === 'read' && scopes.includes(ADMIN_READ_SCOPE)))) {
      deps.audit.emit({ event: 'admin.refused', clientId, address, reason: 'insufficient_scope' })
      const needed = need === 'read' ? ADMIN_READ_SCOPE : ADMIN_SCOPE
      const detail = `this request needs the scope ${need === 'read' ? `${ADMIN_READ_SCOPE} or ` : ''}${ADMIN_SCOPE}`
      if (proof) throw refuseDPoP('insufficient_scope', detail)
      throw refuse(403, `insufficient_scope: ${detail}`, 'insufficient_scope', needed)
    }
    // RFC 9068 §4, RFC 8707 §2: a token is taken only where its audience names the taker. The
    // issuer gives a token with an admin scope and no API resource this server as audience
    // (src/tokens/issuer.ts); one that also names an API resource's scope has that API as its
    // only audience, and that API could otherwise replay it here. Not meant for this server is
    // "invalid for other reasons" (RFC 6750 §3.1): 401 invalid_token, not insufficient_scope.
    const aud = read.claims.aud
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : []
    if (!audiences.includes(deps.realm)) throw refuseToken('the access token is not meant for this server (aud)', clientId)
    return { clientId, canWrite }
  }
}
