// RFC 6750 bearer tokens for the admin API: an access token of this server (its signature, expiry,
// revocation and the client's and user's state checked by the token reader, as everywhere) whose
// scope holds authz:admin, or authz:admin:read for reads (src/domain/admin-scopes.ts).
// §3: no credentials is 401 with a bare challenge; a malformed request 400 invalid_request; a token
// that is not (or no longer) valid 401 invalid_token; a valid one without the scope 403
// insufficient_scope, naming the scope needed. Problem details carry the same code in `detail`.
import { createHash, timingSafeEqual } from 'node:crypto'
import { ADMIN_READ_SCOPE, ADMIN_SCOPE } from '../domain/admin-scopes.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { AdminProblem } from './problem.js'

export type AdminNeed = 'read' | 'write'

type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope'

export function bearerChallenge(realm: string, error?: BearerError, scope?: string): string {
  const r = `Bearer realm="${realm.replace(/["\\]/g, '')}"`
  if (!error) return r
  return `${r}, error="${error}"${scope ? `, scope="${scope}"` : ''}`
}

export type AdminAuthenticate = (authorization: string | undefined, need: AdminNeed, address: string) => Promise<AdminCaller>

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
  return async (authorization, _need, address) => {
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

export function createAdminAuth(deps: Pick<AdminDeps, 'tokenReader' | 'realm' | 'audit'>): AdminAuthenticate {
  const refuse = (status: number, detail: string, error?: BearerError, scope?: string) =>
    new AdminProblem(status, detail, { headers: { 'www-authenticate': bearerChallenge(deps.realm, error, scope) } })

  return async function authenticate(authorization, need, address) {
    if (authorization === undefined) throw refuse(401, 'an access token is required (Authorization: Bearer)')
    const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
    if (!m) throw refuse(400, 'invalid_request: the Authorization header is not a Bearer token', 'invalid_request')
    const token = await deps.tokenReader.read(m[1]!)
    if (token?.kind !== 'access_token') {
      deps.audit.emit({ event: 'admin.refused', address, reason: 'invalid_token' })
      throw refuse(401, 'invalid_token: the access token is not valid', 'invalid_token')
    }
    const clientId = typeof token.claims.client_id === 'string' ? token.claims.client_id : undefined
    const scopes = typeof token.claims.scope === 'string' ? token.claims.scope.split(' ') : []
    const canWrite = scopes.includes(ADMIN_SCOPE)
    if (clientId === undefined || !(canWrite || (need === 'read' && scopes.includes(ADMIN_READ_SCOPE)))) {
      deps.audit.emit({ event: 'admin.refused', clientId, address, reason: 'insufficient_scope' })
      const needed = need === 'read' ? ADMIN_READ_SCOPE : ADMIN_SCOPE
      throw refuse(
        403,
        `insufficient_scope: this request needs the scope ${need === 'read' ? `${ADMIN_READ_SCOPE} or ` : ''}${ADMIN_SCOPE}`,
        'insufficient_scope',
        needed,
      )
    }
    return { clientId, canWrite }
  }
}
