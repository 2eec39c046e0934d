// Passkeys (WebAuthn Level 3): a person registers them on their account page and signs in with one
// alone. The ceremonies' cryptography (CBOR, COSE keys, attestation, signatures) is
// @simplewebauthn/server's; this file decides what is asked and what is accepted:
//
// - The relying-party id is the issuer's host and the only origin accepted is the issuer's
//   (WebAuthn §7.1 steps 9 and 13, §7.2 steps 13 and 15). An IP address cannot be an RP id
//   (§5.1.3 "valid domain"), so an issuer on one offers no passkeys at all.
// - User verification is required at registration and at every sign-in (§7.2 step 17): a passkey
//   is the only factor here, so it must be "something you have" unlocked by "something you know or
//   are". Discoverable credentials (residentKey required, §5.4.6) so that no username is typed.
// - Challenges (§13.4.3) are 256 random bits plus an expiry, MACed with a server secret over the
//   ceremony and what it is bound to: the signed-in session (registration) or the browser's own
//   binding cookie (sign-in). Nothing is stored to hand one out; redeeming one records its hash in
//   used_jtis in one statement, so each is accepted once, on one replica or many.
// - The signature counter (§6.1.1) must move forward when the authenticator keeps one, and the
//   stored value moves in one statement; the backup state (BS) is updated at every use.
// - A passkey sign-in counts toward the same failure counter and lockout as a password
//   (src/interaction/password-check.ts): a failure is counted before the signature is checked and
//   forgotten on success, and a locked account is refused at once.
// - A passkey is also a second factor after a password (src/interaction/authentication-level.ts):
//   that step is bound to the signed-in person. Its challenge is MACed over the session, the
//   browser is offered only the person's own credentials (allowCredentials, §5.5), and an answer
//   made with anyone else's passkey is refused ('other_account') and counted as a failure of the
//   signed-in person, like every failure of that step. User verification is required there too.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Clock } from '../domain/clock.js'
import type { User } from '../domain/types.js'
import type { AuditSink } from '../observe/audit.js'
import type { FailureCounterStore, FailureKey, FailurePolicy } from '../stores/failure-counters.js'
import { PASSKEY_NAME_MAX, type Passkey, type PasskeyStore } from '../stores/passkeys.js'
import type { UsedJtiStore } from '../stores/used-jtis.js'
import type { UserStore } from '../stores/users.js'

/** How long a ceremony may take (WebAuthn §15.1 recommends 300 s to 600 s when UV is required). */

/** The WebAuthn library, loaded at the first ceremony: a server without passkeys never pays for it. */
const webauthn = () => import('@simplewebauthn/server')

export const PASSKEY_CEREMONY_SECONDS = 300

/** The failure counter `source` of a credential id no passkey has (its digest is the counter's name). */
export const UNKNOWN_PASSKEY = 'unknown-passkey'

type Ceremony = 'register' | 'sign-in' | 'second-factor'

export type PasskeyFailure =
  | 'malformed'
  | 'challenge'
  | 'unknown_credential'
  | 'other_account'
  | 'disabled'
  | 'locked'
  | 'verification'
  | 'counter'
  | 'duplicate'
  | 'unavailable'

export interface PasskeyContext {
  address: string
  requestId?: string | undefined
  clientId?: string | undefined
}

export interface PasskeyDeps {
  issuer: string
  /** PASSKEYS */
  enabled: boolean
  /** The name authenticators show beside the account (the product's name). */
  rpName: string
  clock: Clock
  store: PasskeyStore
  users: Pick<UserStore, 'findBySubjectId'>
  usedChallenges: Pick<UsedJtiStore, 'use'>
  failures: Pick<FailureCounterStore, 'recordFailure' | 'clear'>
  policy: FailurePolicy
  audit: AuditSink
  /** MAC key of the challenges (a server secret shared by every replica). */
  challengeKey: Buffer
}

/** Where the issuer's host cannot be a WebAuthn relying-party id: an IP address (WebAuthn §5.1.3). */
export function issuerCanOfferPasskeys(issuer: string): boolean {
  const host = new URL(issuer).hostname.replace(/^\[|\]$/g, '')
  return isIP(host) === 0
}

/**
 * RFC 8176 methods of a passkey sign-in: `hwk` for a device-bound key, `swk` for a synced one
 * (backup eligible: the private key leaves the device), `user` for the presence test, and `mfa`:
 * user verification unlocked the key with a PIN or biometric, a second factor on the same device.
 */
export function passkeyAmr(p: Pick<Passkey, 'backupEligible'>): string[] {
  return [p.backupEligible ? 'swk' : 'hwk', 'user', 'mfa']
}

/**
 * RFC 8176 methods a passkey adds after a password: `hwk` or `swk` as for a sign-in with it, and
 * `mfa` (two factors: the password and the key).
 */
export function passkeySecondFactorAmr(p: Pick<Passkey, 'backupEligible'>): string[] {
  return [p.backupEligible ? 'swk' : 'hwk', 'mfa']
}

/** The WebAuthn user handle of a subject (§14.6.1: no personal data): its SHA-256. */
function userHandle(subjectId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(subjectId).digest())
}

function parseResponse(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined
  try {
    const v: unknown = JSON.parse(raw)
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
    const r = v as Record<string, unknown>
    if (typeof r.id !== 'string' || typeof r.rawId !== 'string' || r.type !== 'public-key') return undefined
    if (typeof r.response !== 'object' || r.response === null) return undefined
    return r
  } catch {
    return undefined
  }
}

export type PasskeyRegistration = { ok: true; passkey: Passkey } | { ok: false; reason: PasskeyFailure }
export type PasskeySignIn = { ok: true; user: User; passkey: Passkey; amr: string[] } | { ok: false; reason: PasskeyFailure }

/** The person a passkey must belong to in the step after a password, and the session the step is bound to. */
export interface SecondFactorSubject {
  subjectId: string
  sid: string
}

export function createPasskeys(deps: PasskeyDeps) {
  const { clock, audit } = deps
  const issuerUrl = new URL(deps.issuer)
  const rpId = issuerUrl.hostname
  const origin = issuerUrl.origin
  const available = deps.enabled && issuerCanOfferPasskeys(deps.issuer)

  const mac = (ceremony: Ceremony, binding: string, body: Buffer) =>
    createHmac('sha256', deps.challengeKey).update(`${ceremony}\n${binding}\n`).update(body).digest()

  /** 32 random bytes, 8 bytes of expiry (ms), and their MAC over the ceremony and the binding. */
  function newChallenge(ceremony: Ceremony, binding: string): Uint8Array<ArrayBuffer> {
    const body = Buffer.alloc(40)
    randomBytes(32).copy(body, 0)
    body.writeBigUInt64BE(BigInt(clock.now() + PASSKEY_CEREMONY_SECONDS * 1000), 32)
    return new Uint8Array(Buffer.concat([body, mac(ceremony, binding, body)]))
  }

  /** Whether the challenge is ours, for this ceremony and binding, unexpired and not used before (it is used now). */
  async function redeem(ceremony: Ceremony, binding: string, challenge: string): Promise<boolean> {
    const raw = Buffer.from(challenge, 'base64url')
    if (raw.length !== 72) return false
    const body = raw.subarray(0, 40)
    if (!timingSafeEqual(raw.subarray(40), mac(ceremony, binding, body))) return false
    const expiresAt = Number(body.readBigUInt64BE(32))
    const now = clock.now()
    if (expiresAt <= now) return false
    const hash = createHash('sha256').update(raw).digest('base64url')
    return deps.usedChallenges.use(`passkey-${ceremony}`, hash, expiresAt, now)
  }

  const failed = (reason: PasskeyFailure, ctx: PasskeyContext, subject?: string): { ok: false; reason: PasskeyFailure } => {
    audit.emit({ event: 'passkey.failed', subject, reason, address: ctx.address, requestId: ctx.requestId, clientId: ctx.clientId })
    return { ok: false, reason }
  }

  /**
   * One failure counted before anything is checked: for the signed-in person in the step after a
   * password (`expected`), else for the credential's owner (or the unknown id's digest).
   */
  async function countFailure(passkey: Passkey | undefined, credentialId: string, expected: string | undefined) {
    const owner = expected ?? passkey?.subjectId
    const key: FailureKey = owner
      ? { kind: 'user', name: owner, source: '' }
      : { kind: 'user', name: createHmac('sha256', deps.challengeKey).update(credentialId).digest('base64url'), source: UNKNOWN_PASSKEY }
    return { key, counted: await deps.failures.recordFailure(key, deps.policy, clock.now()) }
  }

  /**
   * Verifies an assertion (WebAuthn §7.2) of `ceremony` bound to `binding`. `expected`: the person
   * signed in with a password, whose passkey this must be (the step after a password); undefined:
   * a sign-in with the passkey alone, whoever's it is.
   */
  async function assertion(
    ceremony: Ceremony,
    binding: string,
    rawResponse: string | undefined,
    ctx: PasskeyContext,
    expected: string | undefined,
  ): Promise<PasskeySignIn> {
    if (!available) return failed('unavailable', ctx, expected)
    const response = parseResponse(rawResponse) as unknown as AuthenticationResponseJSON | undefined
    if (!response) return failed('malformed', ctx, expected)
    const passkey = await deps.store.findById(response.id)
    const { key, counted } = await countFailure(passkey, response.id, expected)
    const owner = expected ?? passkey?.subjectId
    if (!counted.counted) return failed('locked', ctx, owner)
    const user = owner === undefined ? undefined : await deps.users.findBySubjectId(owner)
    const refused = (reason: PasskeyFailure) => {
      if (user && counted.blockedUntil !== undefined)
        audit.emit({
          event: 'user.locked_out',
          username: user.username,
          subject: user.subjectId,
          reason: 'too_many_failures',
          lockedUntil: new Date(counted.blockedUntil).toISOString(),
          lockouts: counted.blocks,
          ...ctxFields(ctx),
        })
      return failed(reason, ctx, owner)
    }
    if (!passkey) return refused('unknown_credential')
    if (!user?.enabled) return failed('disabled', ctx, owner)
    // Someone else's passkey, in the step of the person who typed the password: refused, counted.
    if (passkey.subjectId !== user.subjectId) return refused('other_account')
    // The user handle, when the authenticator returns one, names the same account (§7.2 step 6).
    const handle = response.response.userHandle
    if (handle !== undefined && handle !== Buffer.from(userHandle(user.subjectId)).toString('base64url')) return refused('verification')
    let challengeOk = false
    let verified
    try {
      verified = await (
        await webauthn()
      ).verifyAuthenticationResponse({
        response,
        expectedChallenge: async (c) => (challengeOk = await redeem(ceremony, binding, c)),
        expectedOrigin: origin,
        expectedRPID: rpId,
        credential: { id: passkey.credentialId, publicKey: passkey.publicKey, counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: true,
      })
    } catch (err) {
      const counter = err instanceof Error && /counter/i.test(err.message)
      return refused(counter ? 'counter' : challengeOk ? 'verification' : 'challenge')
    }
    if (!verified.verified) return refused('verification')
    const info = verified.authenticationInfo
    const recorded = await deps.store.recordUse(passkey.credentialId, {
      previousCounter: passkey.counter,
      counter: info.newCounter,
      backedUp: info.credentialBackedUp,
      at: clock.now(),
    })
    if (!recorded) return refused('counter')
    await deps.failures.clear(key)
    audit.emit({ event: 'passkey.used', subject: user.subjectId, username: user.username, ...ctxFields(ctx) })
    return { ok: true, user, passkey, amr: expected === undefined ? passkeyAmr(passkey) : passkeySecondFactorAmr(passkey) }
  }

  return {
    /** Whether passkeys are offered at all (PASSKEYS, and an issuer whose host can be an RP id). */
    available,
    rpId,

    list: (subjectId: string) => deps.store.listForSubject(subjectId),

    /** The options of navigator.credentials.create() for a signed-in person (WebAuthn §5.4). */
    async registrationOptions(who: { subjectId: string; username: string; sid: string; displayName?: string | undefined }) {
      const existing = await deps.store.listForSubject(who.subjectId)
      const options: PublicKeyCredentialCreationOptionsJSON = await (
        await webauthn()
      ).generateRegistrationOptions({
        rpName: deps.rpName,
        rpID: rpId,
        userName: who.username,
        userID: userHandle(who.subjectId),
        userDisplayName: who.displayName ?? who.username,
        challenge: newChallenge('register', who.sid),
        timeout: PASSKEY_CEREMONY_SECONDS * 1000,
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        extensions: { credProps: true },
      })
      return options
    },

    /** Verifies the browser's answer to registrationOptions and keeps the passkey. */
    async register(
      who: { subjectId: string; sid: string },
      rawResponse: string | undefined,
      name: string,
      ctx: PasskeyContext,
    ): Promise<PasskeyRegistration> {
      if (!available) return failed('unavailable', ctx, who.subjectId)
      const response = parseResponse(rawResponse)
      if (!response) return failed('malformed', ctx, who.subjectId)
      let challengeOk = false
      let verified
      try {
        verified = await (
          await webauthn()
        ).verifyRegistrationResponse({
          response: response as unknown as RegistrationResponseJSON,
          expectedChallenge: async (c) => (challengeOk = await redeem('register', who.sid, c)),
          expectedOrigin: origin,
          expectedRPID: rpId,
          requireUserPresence: true,
          requireUserVerification: true,
        })
      } catch {
        return failed(challengeOk ? 'verification' : 'challenge', ctx, who.subjectId)
      }
      if (!verified.verified) return failed('verification', ctx, who.subjectId)
      const info = verified.registrationInfo
      const passkey: Passkey = {
        credentialId: info.credential.id,
        subjectId: who.subjectId,
        publicKey: info.credential.publicKey,
        counter: info.credential.counter,
        transports: (info.credential.transports ?? []).slice(0, 10),
        backupEligible: info.credentialDeviceType === 'multiDevice',
        backedUp: info.credentialBackedUp,
        aaguid: info.aaguid,
        name: name.slice(0, PASSKEY_NAME_MAX),
        createdAt: clock.now(),
        lastUsedAt: undefined,
      }
      if (!(await deps.store.add(passkey))) return failed('duplicate', ctx, who.subjectId)
      audit.emit({ event: 'passkey.added', subject: who.subjectId, address: ctx.address, requestId: ctx.requestId })
      return { ok: true, passkey }
    },

    /** The options of navigator.credentials.get() for a sign-in with any of this site's passkeys (discoverable). */
    async signInOptions(binding: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
      return (await webauthn()).generateAuthenticationOptions({
        rpID: rpId,
        challenge: newChallenge('sign-in', binding),
        timeout: PASSKEY_CEREMONY_SECONDS * 1000,
        userVerification: 'required',
      })
    },

    /** Verifies a sign-in assertion (WebAuthn §7.2); on success the counter and backup state are recorded. */
    signIn: (binding: string, rawResponse: string | undefined, ctx: PasskeyContext): Promise<PasskeySignIn> =>
      assertion('sign-in', binding, rawResponse, ctx, undefined),

    /**
     * The options of navigator.credentials.get() for the step after a password: only the person's
     * own passkeys are allowed (WebAuthn §5.5 allowCredentials), the challenge bound to the session.
     */
    async secondFactorOptions(who: SecondFactorSubject): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const mine = await deps.store.listForSubject(who.subjectId)
      return (await webauthn()).generateAuthenticationOptions({
        rpID: rpId,
        challenge: newChallenge('second-factor', who.sid),
        timeout: PASSKEY_CEREMONY_SECONDS * 1000,
        userVerification: 'required',
        allowCredentials: mine.map((p) => ({ id: p.credentialId, transports: p.transports })),
      })
    },

    /** Verifies the passkey of the step after a password: it must be one of `who`'s (else 'other_account'). */
    verifySecondFactor: (who: SecondFactorSubject, rawResponse: string | undefined, ctx: PasskeyContext): Promise<PasskeySignIn> =>
      assertion('second-factor', who.sid, rawResponse, ctx, who.subjectId),

    /** Removes one of the person's passkeys; the passkey, or undefined when they have none with that id. */
    async remove(subjectId: string, credentialId: string, ctx: PasskeyContext): Promise<Passkey | undefined> {
      const passkey = (await deps.store.listForSubject(subjectId)).find((p) => p.credentialId === credentialId)
      if (!passkey || !(await deps.store.remove(subjectId, credentialId))) return undefined
      audit.emit({ event: 'passkey.removed', subject: subjectId, ...ctxFields(ctx) })
      return passkey
    },
  }
}

function ctxFields(ctx: PasskeyContext) {
  return { address: ctx.address, requestId: ctx.requestId, clientId: ctx.clientId }
}

export type Passkeys = ReturnType<typeof createPasskeys>
