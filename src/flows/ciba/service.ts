// OpenID CIBA Core 1.0 §7: the backchannel authentication request (poll, ping and push). Validates the
// request in a fixed order (cheap syntax first, then lookups), stores it with a 256-bit
// auth_req_id kept only as a hash, notifies the user, and answers §7.3 {auth_req_id, expires_in, interval}.
import type { AuditSink } from '../../observe/audit.js'
import { randomBytes, randomUUID } from 'node:crypto'
import type { Config } from '../../config.js'
import type { Clock } from '../../domain/clock.js'
import type { Client, User } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import type { CibaCreateResult, CibaRequestStore } from '../../stores/ciba-requests.js'
import type { UserStore } from '../../stores/users.js'
import { newHandle } from '../../tokens/handles.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import { hasControlOrFormatCharacters, parseAcrValues } from '../../grants/acr-values.js'
import type { IdentityProviderDirectory } from '../../interaction/identity-providers.js'
import { CIBA_GRANT } from './grant.js'
import type { CibaNotifier } from './notifier.js'
import { CIBA_AUTH_PARAMS, type ClientJwtVerifier } from './request-object.js'
import { CIBA_INPUT_LIMITS, checkInputLengths } from '../../domain/input-limits.js'
import type { ScopeResolver } from '../../grants/scopes.js'
import type { UserCodeCheck } from '../../interaction/user-code-check.js'
import type { DeliverySecret, Sealer } from './sealed.js'

/** client_notification_token: the longest accepted (a bearer token the client makes up, §7.1). */
export const NOTIFICATION_TOKEN_MAX = 1024
/** RFC 6750 §2.1 b64token: what a Bearer authorization header can carry, and nothing else. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** binding_message: short enough to show on a phone, no control characters (§7.1). */
const BINDING_MESSAGE_MAX = 64

export interface CibaStartResponse {
  auth_req_id: string
  expires_in: number
  interval: number
}

export interface CibaServiceDeps {
  config: Pick<
    Config,
    'issuer' | 'cibaDefaultLifetime' | 'cibaPollingInterval' | 'cibaMaxPendingPerUser' | 'cibaRateLimitPerUser' | 'cibaMinRequestedExpiry'
  >
  clock: Clock
  users: UserStore
  requests: CibaRequestStore
  scopes: ScopeResolver
  keys: Pick<SigningKeyService, 'verify'>
  clientJwts: ClientJwtVerifier
  notifier: CibaNotifier
  audit?: AuditSink
  /** user_code checks, throttled per client and user. */
  userCodes: UserCodeCheck
  /** What acr_values idp: may name for a client (the approval page's sign-in forwards there). */
  providers: Pick<IdentityProviderDirectory, 'idpNames'>
  /** Seals a ping or push request's auth_req_id and client_notification_token (sealed.ts). */
  sealer: Sealer
}

export interface CibaService {
  start(client: Client, form: Record<string, string>, ctx?: { address?: string; requestId?: string }): Promise<CibaStartResponse>
}

export function checkBindingMessage(message: string | undefined): void {
  if (message === undefined) return
  // Characters, not UTF-16 units: an emoji counts once.
  if ([...message].length > BINDING_MESSAGE_MAX) {
    throw new OAuthError('invalid_binding_message', `binding_message is longer than ${BINDING_MESSAGE_MAX} characters`)
  }
  if (hasControlOrFormatCharacters(message)) {
    throw new OAuthError('invalid_binding_message', 'binding_message contains control characters')
  }
}

/**
 * requested_expiry (§7.1, which leaves the request's life to the OP): a positive integer no greater
 * than the lifetime cap, and no less than `min` (or the cap, when that is lower). Without the
 * minimum a client could let each request lapse at once and send the next, so that the pending cap
 * never fills however many notifications reach the user.
 */
export function checkRequestedExpiry(value: string | undefined, cap: number, min: number): number {
  if (value === undefined) return cap
  if (!/^[1-9][0-9]{0,8}$/.test(value)) throw new OAuthError('invalid_request', 'requested_expiry must be a positive integer')
  const n = Number(value)
  if (n > cap) throw new OAuthError('invalid_request', `requested_expiry must not exceed ${cap} seconds`)
  const least = Math.min(min, cap)
  if (n < least) throw new OAuthError('invalid_request', `requested_expiry must be at least ${least} seconds`)
  return n
}

/**
 * The window of CIBA_RATE_LIMIT_PER_USER. It is counted from the stored requests, which cleanup
 * keeps CIBA_RETENTION_SECONDS (300) past their expiry, so it must stay shorter than that.
 */
export const CIBA_RATE_WINDOW_SECONDS = 60

/** The refusals of the pending cap and of the rate: CIBA §13 access_denied, 403 at this endpoint. */
function refused(created: Exclude<CibaCreateResult, { kind: 'created' }>, now: number): OAuthError {
  if (created.kind === 'pending') {
    return new OAuthError('access_denied', 'too many pending requests from this client for this user', { status: 403 })
  }
  // RFC 9110 §10.2.3: when a request of this client for this user is accepted again.
  const retryAfter = Math.max(1, Math.ceil((created.retryAt - now) / 1000))
  return new OAuthError('access_denied', 'too many requests from this client for this user, retry later', {
    status: 403,
    headers: { 'retry-after': String(retryAfter) },
  })
}

/**
 * §7.1: REQUIRED for a client registered for ping or push; it is the Bearer token of the
 * notification (§10.2, §10.3), so it must be one (RFC 6750 §2.1), and bounded. Ignored in poll mode.
 */
export function checkNotificationToken(
  client: Pick<Client, 'backchannelTokenDeliveryMode'>,
  token: string | undefined,
): string | undefined {
  if (client.backchannelTokenDeliveryMode === 'poll') return undefined
  if (token === undefined) throw new OAuthError('invalid_request', 'client_notification_token is required for ping and push clients')
  if (token.length > NOTIFICATION_TOKEN_MAX) {
    throw new OAuthError('invalid_request', `client_notification_token must be at most ${NOTIFICATION_TOKEN_MAX} characters`)
  }
  if (!B64TOKEN.test(token))
    throw new OAuthError('invalid_request', 'client_notification_token must be a bearer token (RFC 6750 section 2.1)')
  return token
}

export function createCibaService(deps: CibaServiceDeps): CibaService {
  const { config, clock } = deps

  async function effectiveParams(client: Client, form: Record<string, string>): Promise<Record<string, string>> {
    if (form.request === undefined) return form
    // With `request`, no authentication parameter may appear outside it (§7.1.1).
    const outside = CIBA_AUTH_PARAMS.filter((p) => form[p] !== undefined)
    if (outside.length > 0) {
      throw new OAuthError('invalid_request', `with a request object, ${outside[0]} must be inside it, not outside`)
    }
    return deps.clientJwts.requestObject(client, form.request)
  }

  async function idTokenHintSubject(client: Client, hint: string): Promise<string> {
    // §7.1: an ID token we issued to this client; an expired one is still a valid hint.
    let payload
    try {
      ;({ payload } = await deps.keys.verify(hint, { typ: 'JWT' })) // our ID tokens; never an access token or introspection JWT
    } catch (err) {
      throw new OAuthError('invalid_request', 'id_token_hint is not an ID token issued by this server', { cause: err })
    }
    const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
    if (payload.iss !== config.issuer || !aud.includes(client.clientId) || typeof payload.sub !== 'string') {
      throw new OAuthError('invalid_request', 'id_token_hint was not issued to this client')
    }
    return payload.sub
  }

  async function findUser(client: Client, p: Record<string, string>): Promise<User> {
    let user: User | undefined
    if (p.login_hint !== undefined) user = await deps.users.findByLoginHint(p.login_hint)
    else if (p.id_token_hint !== undefined) user = await deps.users.findBySubjectId(await idTokenHintSubject(client, p.id_token_hint))
    else user = await deps.users.findByLoginHint(await deps.clientJwts.loginHintToken(client, p.login_hint_token!))
    if (!user || !user.enabled) throw new OAuthError('unknown_user_id', 'the hint names no known user')
    return user
  }

  return {
    async start(client, form, ctx) {
      if (!client.allowedGrantTypes.includes(CIBA_GRANT)) {
        throw new OAuthError('unauthorized_client', 'the client may not use CIBA')
      }
      const p = await effectiveParams(client, form)
      checkBindingMessage(p.binding_message)
      checkInputLengths(p, CIBA_INPUT_LIMITS)
      if (p.scope === undefined) throw new OAuthError('invalid_request', 'scope is required')
      if (!p.scope.split(' ').includes('openid')) throw new OAuthError('invalid_request', 'scope must include openid')
      const notificationToken = checkNotificationToken(client, p.client_notification_token)
      const hints = (['login_hint', 'id_token_hint', 'login_hint_token'] as const).filter((h) => p[h] !== undefined)
      if (hints.length !== 1) {
        throw new OAuthError('invalid_request', 'exactly one of login_hint, id_token_hint and login_hint_token is required')
      }
      const cap = client.cibaLifetime ?? config.cibaDefaultLifetime
      const expiresIn = checkRequestedExpiry(p.requested_expiry, cap, config.cibaMinRequestedExpiry)
      const acr = parseAcrValues(p.acr_values, client, p.acr_values === undefined ? undefined : await deps.providers.idpNames(client))
      const granted = await deps.scopes.resolve(client, p.scope, { allowIdentity: true, resource: p.resource })
      const user = await findUser(client, p)
      await deps.userCodes.check(client.clientId, user, p.user_code)
      const now = clock.now()
      const authReqId = newHandle()
      const id = randomBytes(16).toString('hex') // the approval URL's id; hex so that it never starts with '-' on a command line
      const interval = client.pollingInterval ?? config.cibaPollingInterval
      const expiresAt = now + expiresIn * 1000
      const request = {
        id,
        authReqId,
        clientId: client.clientId,
        subjectId: user.subjectId,
        requestedScopes: granted.scopes,
        resources: p.resource === undefined ? [] : [p.resource],
        acrValues: acr.acrValues,
        tenant: acr.tenant,
        idp: acr.idp,
        bindingMessage: p.binding_message,
        intervalSeconds: interval,
        familyId: randomUUID(),
        createdAt: now,
        expiresAt,
        deliveryMode: client.backchannelTokenDeliveryMode,
        deliverySecret:
          notificationToken === undefined
            ? undefined
            : deps.sealer.seal({ authReqId, notificationToken } satisfies DeliverySecret, id, 'secret'),
      }
      // Push-notification fatigue: a client may neither pile up requests for one user nor send
      // them faster than the rate. Counted per client and user, so that no client can keep the
      // others from reaching the user.
      const created = await deps.requests.createWithinLimit(
        request,
        {
          maxPending: config.cibaMaxPendingPerUser,
          maxPerWindow: config.cibaRateLimitPerUser,
          windowMs: CIBA_RATE_WINDOW_SECONDS * 1000,
        },
        now,
      )
      if (created.kind !== 'created') throw refused(created, now)
      deps.notifier.notify({
        request_id: id,
        subject: user.subjectId,
        username: user.username,
        client_id: client.clientId,
        client_name: client.clientName ?? client.clientId,
        scopes: granted.scopes,
        binding_message: p.binding_message ?? null,
        acr_values: [...acr.acrValues, ...(acr.tenant ? [`tenant:${acr.tenant}`] : []), ...(acr.idp ? [`idp:${acr.idp}`] : [])],
        expires_at: Math.floor(expiresAt / 1000),
        approval_url: approvalUrl(config.issuer, id),
      })
      deps.audit?.emit({
        event: 'ciba.requested',
        clientId: client.clientId,
        subject: user.subjectId,
        grantType: CIBA_GRANT,
        address: ctx?.address,
        requestId: ctx?.requestId,
        scope: granted.scopes.join(' '),
        cibaRequestId: id,
      })
      // No poll time is stamped here: the first poll is never slow_down.
      return { auth_req_id: authReqId, expires_in: expiresIn, interval }
    },
  }
}

export function approvalUrl(issuer: string, requestId: string): string {
  return `${issuer}/ciba/approve?request=${encodeURIComponent(requestId)}`
}
