// RFC 8628 §3.4 (device access token request), §3.5 (its errors): the device_code grant. The
// polling rules (authorization_pending, slow_down with the interval stored in the database,
// expired_token, access_denied, single use and the revocation of a second use) are the ones CIBA
// uses (polling.ts); this file says how a device authorization issues.
import { acrOf } from '../../interaction/authentication-level.js'
import { z } from 'zod'
import type { Clock } from '../../domain/clock.js'
import type { Client, DeviceAuthorization } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import type { DeviceAuthorizationStore } from '../../stores/device-authorizations.js'
import type { UserStore } from '../../stores/users.js'
import type { TokenIssuer, TokenResponse } from '../../tokens/issuer.js'
import type { Polling } from '../../grants/polling.js'
import type { GrantContext, GrantHandler } from '../../grants/registry.js'
import { narrowToResource, type ScopeResolver } from '../../grants/scopes.js'
import { issuedSignIn } from '../../grants/sign-in-record.js'

/** RFC 8628 §3.4: the grant type of the device access token request. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

const TEXTS = {
  unknown: 'unknown device_code',
  usedAgain: 'device_code already used',
  expired: 'the device_code has expired',
  denied: 'the user denied the request',
}

export interface DeviceCodeGrantDeps {
  clock: Clock
  devices: DeviceAuthorizationStore
  polling: Polling
  users: Pick<UserStore, 'findBySubjectId'>
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
}

export function createDeviceCodeGrant(deps: DeviceCodeGrantDeps): GrantHandler<{ device_code: string; resource?: string | undefined }> {
  // Re-resolved at issuance: a scope the client lost since the request is not issued.
  const grantOf = (client: Client, d: DeviceAuthorization) =>
    deps.scopes.resolve(client, (d.approvedScopes ?? []).join(' '), { allowIdentity: true })

  async function issue(
    client: Client,
    d: DeviceAuthorization,
    resource: string | undefined,
    ctx: GrantContext | undefined,
  ): Promise<TokenResponse> {
    const user = d.subjectId === undefined ? undefined : await deps.users.findBySubjectId(d.subjectId)
    if (!user || !user.enabled) throw new OAuthError('invalid_grant', 'the user is no longer active')
    const all = await grantOf(client, d)
    const granted = await narrowToResource(deps.scopes, client, all, resource)
    // Requests approved before amr (or idp) was kept were approved after a password sign-in.
    const { authTime, amr, idpClaim } = issuedSignIn({
      authTime: d.authTime ?? d.decidedAt ?? deps.clock.now(),
      amr: d.amr ?? ['pwd'],
      idp: d.idp,
    })
    // The level the approver's sign-in reached (phr, mfa); none for a password alone.
    const acr = acrOf(amr)
    return deps.tokenIssuer.issue({
      client,
      subjectId: user.subjectId,
      granted,
      refreshGranted: all,
      familyId: d.familyId,
      claims: { ...idpClaim, auth_time: authTime, amr, ...(acr ? { acr } : {}) },
      idToken: { user, authTime, amr, ...(acr ? { acr } : {}), extraClaims: idpClaim },
      refreshToken: true,
      dpopJkt: ctx?.dpop?.jkt,
    })
  }

  return {
    grantType: DEVICE_CODE_GRANT,
    // RFC 8628 §3.4: the device client is usually public (a TV, a CLI); it authenticates if it can.
    allowPublicClients: true,
    params: z.object({ device_code: z.string().min(1).max(256), resource: z.string().optional() }),
    async handle(client, { device_code, resource }, ctx) {
      const found = await deps.devices.findByDeviceCode(device_code)
      // RFC 8707 §2.2: a resource the approval does not cover is refused before the code is spent.
      if (resource !== undefined && found?.clientId === client.clientId && found.status === 'approved')
        await narrowToResource(deps.scopes, client, await grantOf(client, found), resource)
      return deps.polling.poll({
        client,
        found,
        store: deps.devices,
        texts: TEXTS,
        issue: (consumed) => issue(client, consumed, resource, ctx),
        grantType: DEVICE_CODE_GRANT,
        ctx,
      })
    },
  }
}
