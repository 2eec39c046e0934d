// RFC 6750 bearer tokens for the admin API: an access token of this server (its signature, expiry,
// revocation and the client's and user's state checked by the token reader, as everywhere) whose
// scope holds authz:admin, or authz:admin:read for reads (src/domain/admin-scopes.ts).
// §3: no credentials is 401 with a bare challenge; a malformed request 400 invalid_request; a token
// that is not (or no longer) valid 401 invalid_token; a valid one without the scope 403
// insufficient_scope, naming the scope needed. Problem details carry the same code in `detail`.
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

export function createAdminAuth(deps: Pick<AdminDeps, 'tokenReader' | 'realm' | 'audit'>) {
  const refuse = (status: number, detail: string, error?: BearerError, scope?: string) =>
    new AdminProblem(status, detail, { headers: { 'www-authenticate': bearerChallenge(deps.realm, error, scope) } })

  return async function authenticate(authorization: string | undefined, need: AdminNeed, address: string): Promise<AdminCaller> {
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
