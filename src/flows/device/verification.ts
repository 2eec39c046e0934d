// RFC 8628 §3.3: the person's side of the device flow, on the shared foundation (the sign-in
// session, the sign-in page, the decision screen). The person types the user code (or follows
// verification_uri_complete), signs in, sees the application, what it asks for and the code to
// compare with the device's screen (§5.4: remote phishing), and approves or denies. Each
// decision is for one request (the request is the consent): nothing is remembered. Wrong codes
// are throttled per source address (§5.1). Returns page models; rendering is src/flows/device/pages.ts.
import type { AuditSink } from '../../observe/audit.js'
import { DEVICE_CODE_GRANT } from './grant.js'
import type { Clock } from '../../domain/clock.js'
import type { DeviceAuthorization } from '../../domain/types.js'
import { signInRecord } from '../../grants/sign-in-record.js'
import { decisionView, type DecisionView } from '../../interaction/decision.js'
import type { ReturnTargetInfo } from '../../interaction/return-to.js'
import type { Session } from '../../interaction/session.js'
import type { LevelCheck, NextStep } from '../../interaction/authentication-level.js'
import type { ClientStore } from '../../stores/clients.js'
import type { DeviceAuthorizationStore } from '../../stores/device-authorizations.js'
import type { ResourceStore } from '../../stores/resources.js'
import { formatUserCode, normalizeUserCode } from './user-code.js'
import type { DeviceUserCodeThrottle } from '../../interaction/user-code-check.js'

export type DevicePage =
  /** The code entry form; `unknown`: the typed code names no request. */
  | { kind: 'enter'; unknown?: boolean }
  /** The entry form with a code that another site's link sent, not looked up: the person confirms it. */
  | { kind: 'confirm'; userCode: string | undefined }
  /** Too many wrong codes from this address; `retryAfter`: seconds until the block ends. */
  | { kind: 'blocked'; retryAfter: number }
  | { kind: 'expired' }
  /** Already approved, denied or redeemed. */
  | { kind: 'used' }
  /**
   * No session: the person is sent to the sign-in page, which returns to `userCode`'s page;
   * `requestId` (the request the code named) lets the sign-in page name the application.
   */
  | { kind: 'sign-in'; userCode: string; requestId: string }
  /** A decision posted without a (live) session. */
  | { kind: 'signed-out'; userCode: string; requestId: string }
  /** The session is too weak (requireMfa, a second factor the person has): to the missing factor, which returns here. */
  | { kind: 'step-up'; userCode: string; requestId: string; step: Exclude<NextStep, 'none'> }
  | { kind: 'decision'; userCode: string; requestId: string; view: DecisionView; unanswered?: boolean }
  | { kind: 'done'; status: 'approved' | 'denied'; clientName: string }

export interface DeviceVerificationDeps {
  clock: Clock
  devices: Pick<DeviceAuthorizationStore, 'findByUserCode' | 'findByIdAndUserCode' | 'decide'>
  clients: Pick<ClientStore, 'findById'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  throttle: DeviceUserCodeThrottle
  audit?: AuditSink
  /** What the approver's session still needs (none when undefined). */
  levels?: LevelCheck | undefined
}

/** How src/flows/device/authorization.ts makes request ids (16 random bytes, hex). */
const REQUEST_ID = /^[0-9a-f]{32}$/

/** The request the typed code names, if it can still be decided; else the page that says why not. */
type Opened = { device: DeviceAuthorization; userCode: string } | DevicePage

export interface DeviceVerification {
  /**
   * For the sign-in page: /device is always a valid return target. It names the application
   * only for `request` (the request's id, 128 random bits) together with the code that request
   * has: /device sends both after its throttled lookup found the code. The code alone is never
   * looked up here (no unthrottled oracle), and a guessed id finds nothing.
   */
  describe(target: URL): Promise<ReturnTargetInfo>
  /**
   * `fromAnotherSite`: the browser says another site started this request (Sec-Fetch-Site
   * cross-site or same-site: a link, an auto-submitted form, an image). Then the code is not
   * looked up, so not counted: otherwise any page could make its visitors' browsers send wrong
   * codes until their address is blocked (§5.1's throttle turned against them). The person
   * confirms the code on this page, and that request is the page's own. Every such request gets
   * the same page, right code or wrong, so it tells nothing (a client that lies about the
   * header gains nothing either). Opened directly (a scanned QR code, a typed URL: `none`) or
   * without fetch metadata, the code is looked up at once as before.
   */
  show(
    typed: string | undefined,
    session: Session | undefined,
    address: string,
    opts?: {
      fromAnotherSite?: boolean
    },
  ): Promise<DevicePage>
  /** Approves or denies; the tokens carry the session's auth_time, amr and idp (OIDC Core §2). */
  decide(typed: string | undefined, session: Session | undefined, address: string, decision: string | undefined): Promise<DevicePage>
}

export function createDeviceVerification(deps: DeviceVerificationDeps): DeviceVerification {
  const { clock } = deps

  async function open(typed: string | undefined, address: string): Promise<Opened> {
    if (typed === undefined || typed.trim() === '') return { kind: 'enter' }
    const userCode = normalizeUserCode(typed)
    const found = await deps.throttle.lookup(address, userCode, (code) => deps.devices.findByUserCode(code))
    if (found.kind === 'blocked')
      return { kind: 'blocked', retryAfter: Math.max(1, Math.ceil(((found.until ?? clock.now()) - clock.now()) / 1000)) }
    if (found.kind === 'unknown') return { kind: 'enter', unknown: true }
    const device = found.value
    if (device.status !== 'pending' || device.consumedAt !== undefined) return { kind: 'used' }
    if (device.expiresAt <= clock.now()) return { kind: 'expired' }
    return { device, userCode: userCode! }
  }

  /** The step-up the session needs before it may decide for this device's client, if any. */
  async function weak(device: DeviceAuthorization, userCode: string, session: Session): Promise<DevicePage | undefined> {
    if (!deps.levels) return undefined
    const step = await deps.levels.next(session, { client: await deps.clients.findById(device.clientId) })
    return step === 'none' ? undefined : { kind: 'step-up', userCode, requestId: device.id, step }
  }

  async function decisionPage(device: DeviceAuthorization, userCode: string, session: Session): Promise<DevicePage & { kind: 'decision' }> {
    const [client, catalogue] = await Promise.all([deps.clients.findById(device.clientId), deps.resources.loadCatalogue()])
    return {
      kind: 'decision',
      userCode,
      requestId: device.id,
      view: decisionView(catalogue, {
        client: { clientId: device.clientId, clientName: client?.clientName },
        username: session.username,
        scopes: device.requestedScopes,
        // The person compares it with the code on the device's screen (§5.4).
        bindingMessage: formatUserCode(userCode),
      }),
    }
  }

  return {
    /**
     * For the sign-in page: /device is always a valid return target. It names the application
     * only for `request` (the request's id, 128 random bits) together with the code that request
     * has: /device sends both after its throttled lookup found the code. The code alone is never
     * looked up here (no unthrottled oracle), and a guessed id finds nothing.
     */
    async describe(target: URL): Promise<ReturnTargetInfo> {
      const id = target.searchParams.get('request')
      const userCode = normalizeUserCode(target.searchParams.get('user_code') ?? '')
      if (id === null || !REQUEST_ID.test(id) || userCode === undefined) return {}
      const device = await deps.devices.findByIdAndUserCode(id, userCode)
      if (!device) return {}
      const client = await deps.clients.findById(device.clientId)
      return {
        client: { clientId: device.clientId, clientName: client?.clientName ?? device.clientId },
        providers: client && {
          identityProviderRestrictions: client.identityProviderRestrictions,
          enableLocalLogin: client.enableLocalLogin,
          idp: undefined,
        },
      }
    },

    /**
     * `fromAnotherSite`: the browser says another site started this request (Sec-Fetch-Site
     * cross-site or same-site: a link, an auto-submitted form, an image). Then the code is not
     * looked up, so not counted: otherwise any page could make its visitors' browsers send wrong
     * codes until their address is blocked (§5.1's throttle turned against them). The person
     * confirms the code on this page, and that request is the page's own. Every such request gets
     * the same page, right code or wrong, so it tells nothing (a client that lies about the
     * header gains nothing either). Opened directly (a scanned QR code, a typed URL: `none`) or
     * without fetch metadata, the code is looked up at once as before.
     */
    async show(
      typed: string | undefined,
      session: Session | undefined,
      address: string,
      opts: { fromAnotherSite?: boolean } = {},
    ): Promise<DevicePage> {
      if (opts.fromAnotherSite && typed !== undefined && typed.trim() !== '') {
        const code = normalizeUserCode(typed)
        return { kind: 'confirm', userCode: code && formatUserCode(code) }
      }
      const opened = await open(typed, address)
      if (!('device' in opened)) return opened
      if (!session) return { kind: 'sign-in', userCode: opened.userCode, requestId: opened.device.id }
      return (await weak(opened.device, opened.userCode, session)) ?? decisionPage(opened.device, opened.userCode, session)
    },

    /** Approves or denies; the tokens carry the session's auth_time, amr and idp (OIDC Core §2). */
    async decide(
      typed: string | undefined,
      session: Session | undefined,
      address: string,
      decision: string | undefined,
    ): Promise<DevicePage> {
      const opened = await open(typed, address)
      if (!('device' in opened)) return opened
      const { device, userCode } = opened
      if (!session) return { kind: 'signed-out', userCode, requestId: device.id }
      const stepUp = await weak(device, userCode, session)
      if (stepUp) return stepUp
      const shown = await decisionPage(device, userCode, session)
      if (decision !== 'approve' && decision !== 'deny') return { ...shown, unanswered: true }
      const decided = await deps.devices.decide(
        device.id,
        decision === 'approve'
          ? { status: 'approved', subjectId: session.subjectId, approvedScopes: device.requestedScopes, ...signInRecord(session) }
          : { status: 'denied' },
        clock.now(),
      )
      // Lost a race with another decision or with expiry.
      if (!decided) return device.expiresAt <= clock.now() ? { kind: 'expired' } : { kind: 'used' }
      deps.audit?.emit({
        event: decided.status === 'approved' ? 'device.approved' : 'device.denied',
        clientId: device.clientId,
        subject: session.subjectId,
        grantType: DEVICE_CODE_GRANT,
        address,
        ...(decided.status === 'approved' ? { scope: device.requestedScopes.join(' ') } : { reason: 'user_denied' }),
      })
      return { kind: 'done', status: decided.status as 'approved' | 'denied', clientName: shown.view.clientName }
    },
  }
}
