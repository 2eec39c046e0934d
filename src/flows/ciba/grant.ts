// OpenID CIBA Core 1.0 §10.1 (token request), §11 (errors): the poll-mode token grant. The
// polling rules (check order, slow_down, expiry, single use and the revocation of a second use)
// are shared with the device_code grant (polling.ts); this file says how CIBA issues.
import { SATISFIED_ACR_VALUES } from '../../grants/acr-values.js'
import { acrOf } from '../../interaction/authentication-level.js'
import { z } from 'zod'
import type { Clock } from '../../domain/clock.js'
import type { CibaRequest, Client } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import { narrowToResource, type ScopeResolver } from '../../grants/scopes.js'
import type { TokenIssuer, TokenResponse } from '../../tokens/issuer.js'
import type { CibaRequestStore } from '../../stores/ciba-requests.js'
import type { UserStore } from '../../stores/users.js'
import type { Polling } from '../../grants/polling.js'
import type { GrantHandler } from '../../grants/registry.js'
import { issuedSignIn } from '../../grants/sign-in-record.js'
import { CIBA_GRANT } from '../../grants/ciba-decision.js'

export { CIBA_GRANT } from '../../grants/ciba-decision.js'

export { REDEMPTION_GRACE_MS } from '../../grants/polling.js'

const TEXTS = {
  unknown: 'unknown auth_req_id',
  usedAgain: 'auth_req_id already used',
  expired: 'the request has expired',
  denied: 'the user denied the request',
}

export interface CibaGrantDeps {
  clock: Clock
  requests: CibaRequestStore
  polling: Polling
  users: Pick<UserStore, 'findBySubjectId'>
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
}

/** CIBA Core §10.3: a push client's tokens go to its notification endpoint; the auth_req_id is never redeemed here. */
const PUSHED = 'a push-mode client receives its tokens at its notification endpoint'

/** The approved scopes, re-resolved at issuance: a scope the client lost since the request is not issued. */
const grantOf = (scopes: ScopeResolver, client: Client, req: CibaRequest) =>
  scopes.resolve(client, (req.approvedScopes ?? []).join(' '), { allowIdentity: true, resource: req.resources[0] })

/**
 * Issues the tokens of an approved, consumed request (the token endpoint's poll and ping; the
 * delivery worker's push, whose ID token carries `cibaPush` claims, §10.3.1). `resource` (RFC 8707
 * §2.2) narrows the access token to one resource of the request.
 */
export function createCibaIssue(deps: Omit<CibaGrantDeps, 'requests' | 'polling'>) {
  const { clock } = deps
  return async function issue(
    client: Client,
    req: CibaRequest,
    opts: { cibaPush?: { authReqId: string }; resource?: string | undefined; dpopJkt?: string | undefined } = {},
  ): Promise<TokenResponse> {
    const user = await deps.users.findBySubjectId(req.subjectId)
    if (!user || !user.enabled) throw new OAuthError('invalid_grant', 'the user is no longer active')
    const all = await grantOf(deps.scopes, client, req)
    const granted = await narrowToResource(deps.scopes, client, all, opts.resource)
    // A request approved before amr and the sign-in's idp were kept: a password sign-in, and the idp it named.
    const { authTime, amr, idpClaim } = issuedSignIn({
      authTime: req.authTime ?? req.decidedAt ?? clock.now(),
      amr: req.amr ?? ['pwd'],
      idp: req.signInIdp ?? req.idp,
    })
    // The level the approver's sign-in reached (phr, mfa), else the value a password sign-in satisfies, as before.
    const acr = acrOf(amr) ?? req.acrValues.find((v) => SATISFIED_ACR_VALUES.includes(v))
    const extra: Record<string, unknown> = { ...idpClaim }
    if (req.tenant !== undefined) extra.tenant = req.tenant
    return deps.tokenIssuer.issue({
      client,
      subjectId: req.subjectId,
      granted,
      refreshGranted: all,
      familyId: req.familyId,
      claims: { ...extra, auth_time: authTime, amr, ...(acr ? { acr } : {}) },
      idToken: { user, authTime, amr, ...(acr ? { acr } : {}), extraClaims: extra, ...(opts.cibaPush ? { cibaPush: opts.cibaPush } : {}) },
      refreshToken: true,
      dpopJkt: opts.dpopJkt,
    })
  }
}

export function createCibaGrant(deps: CibaGrantDeps): GrantHandler<{ auth_req_id: string; resource?: string | undefined }> {
  const { requests } = deps
  const issue = createCibaIssue(deps)

  return {
    grantType: CIBA_GRANT,
    params: z.object({ auth_req_id: z.string().min(1).max(256), resource: z.string().optional() }),
    async handle(client, { auth_req_id, resource }, ctx) {
      if (client.backchannelTokenDeliveryMode === 'push') throw new OAuthError('unauthorized_client', PUSHED)
      const found = await requests.findByAuthReqId(auth_req_id)
      // A request made while the client was registered for push stays push, whatever it is now.
      if (found?.deliveryMode === 'push' && found.clientId === client.clientId) throw new OAuthError('unauthorized_client', PUSHED)
      // RFC 8707 §2.2: a resource the request does not cover is refused before it is spent.
      if (resource !== undefined && found?.clientId === client.clientId && found.status === 'approved')
        await narrowToResource(deps.scopes, client, await grantOf(deps.scopes, client, found), resource)
      return deps.polling.poll({
        client,
        found,
        store: requests,
        texts: TEXTS,
        issue: (consumed) => issue(client, consumed, { resource, dpopJkt: ctx?.dpop?.jkt }),
        grantType: CIBA_GRANT,
        ctx,
      })
    },
  }
}
