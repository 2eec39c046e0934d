// RFC 7009 token revocation. A client revokes only its own tokens; anything else (unknown,
// malformed, another client's) is silently a success (§2.2). JWT access tokens are revoked by jti
// until their exp (revoked_tokens + NOTIFY to every replica); refresh tokens take their whole
// grant family with them (§2.1: SHOULD also invalidate the access tokens of the same grant),
// through the one-time-use helper, whose revocation excludes a refresh issuing into the family.
import type { Config } from '../../config.js'
import type { Clock } from '../../domain/clock.js'
import type { Client } from '../../domain/types.js'
import type { GrantStore } from '../../stores/grants.js'
import type { RevocationStore } from '../../stores/revocations.js'
import type { OneTimeUse } from '../../grants/one-time-use.js'
import type { AuditSink } from '../../observe/audit.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import { looksLikeJwt } from '../../tokens/token-reader.js'
import type { RevocationList } from '../../tokens/revocation-list.js'

export interface RevocationService {
  revoke(client: Client, token: string, hint?: string, ctx?: RevocationContext): Promise<void>
}

/** About the request, for the audit event. */
export interface RevocationContext {
  address?: string
  requestId?: string
}

export function createRevocationService(deps: {
  config: Pick<Config, 'issuer'>
  clock: Clock
  keys: SigningKeyService
  grants: Pick<GrantStore, 'find' | 'remove'>
  oneTimeUse: Pick<OneTimeUse, 'revokeFamily'>
  revocations: RevocationStore
  list: Pick<RevocationList, 'add'>
  audit?: AuditSink
}): RevocationService {
  /** Only what was revoked is audited: an unknown or foreign token is a silent success (§2.2). */
  const revoked = (client: Client, tokenKind: string, subject: unknown, ctx: RevocationContext | undefined) =>
    deps.audit?.emit({
      event: 'token.revoked',
      clientId: client.clientId,
      subject: typeof subject === 'string' ? subject : undefined,
      tokenKind,
      address: ctx?.address,
      requestId: ctx?.requestId,
    })

  async function revokeJwt(client: Client, token: string, now: number, ctx: RevocationContext | undefined) {
    let payload: Record<string, unknown>
    try {
      payload = (await deps.keys.verify(token, { typ: 'at+jwt' })).payload
    } catch {
      return
    }
    const { jti, exp } = payload
    if (payload.iss !== deps.config.issuer || payload.client_id !== client.clientId) return
    if (typeof jti !== 'string' || typeof exp !== 'number' || exp * 1000 <= now) return
    await deps.revocations.revoke({ jti, clientId: client.clientId, expiresAt: exp * 1000, revokedAt: now })
    deps.list.add(jti, exp * 1000)
    revoked(client, 'access_token', payload.sub, ctx)
  }

  return {
    async revoke(client, token, _hint, ctx) {
      const now = deps.clock.now()
      if (looksLikeJwt(token)) return revokeJwt(client, token, now, ctx)
      if (token.length > 100) return
      // One lookup whatever the hint: a handle hash is unique across kinds.
      const g = await deps.grants.find(token)
      if (!g || g.clientId !== client.clientId) return
      if (g.kind === 'refresh_token') await deps.oneTimeUse.revokeFamily(g.familyId)
      else if (g.kind === 'reference_token') await deps.grants.remove(token, 'reference_token', client.clientId)
      else return
      revoked(client, g.kind, g.subjectId, ctx)
    },
  }
}
