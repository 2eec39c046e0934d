// How strong a sign-in is, and what a request still needs: the one place that decides both.
//
// The session's amr (RFC 8176 §2) is the record of the methods used in it: `pwd` a password,
// `otp` a one-time code (or a recovery code, itself a one-time secret), `hwk`/`swk` a passkey
// (WebAuthn: a key held in hardware or software), `mfa` more than one factor. The level reached
// is its acr (OpenID Connect Core §2), with the values of the OpenID Connect Extended
// Authentication Profile ACR values:
//   phr  phishing-resistant: a passkey was used;
//   mfa  a password and a second factor (a one-time code, or a passkey) were used;
//   none otherwise: a password alone never gives either.
// What a request needs (`mfa` or `phr`) comes from its acr_values, from the client's or the
// user's requireMfa, and from the user having a second factor at all (such a person is always
// asked for it after the password). A second factor is one-time codes or, where passkeys are
// offered (PASSKEYS), a passkey: a person with a passkey who signs in with a password is asked for
// the passkey next (heldFactors). A session below that is stepped up (only the missing factor is
// asked), never silently accepted.
import type { Client } from '../domain/types.js'
import { ACCOUNT_TWO_STEP_PATH, PASSKEY_SIGN_IN_PATH, SECOND_FACTOR_PATH } from '../endpoints.js'
import type { UserFactorStore } from '../stores/user-factors.js'
import type { Passkeys } from './passkeys.js'
import type { StoredSession } from '../stores/user-sessions.js'
import type { UserStore } from '../stores/users.js'

/** The acr values this server can reach (discovery acr_values_supported), strongest first. */
export const AUTHENTICATION_LEVELS = ['phr', 'mfa'] as const

export type AuthenticationLevel = (typeof AUTHENTICATION_LEVELS)[number]

const PASSKEY_METHODS = ['hwk', 'swk']

/** The level the methods in `amr` reach: `phr` with a passkey, `mfa` with a password and a one-time code; else undefined. */
export function acrOf(amr: readonly string[]): AuthenticationLevel | undefined {
  if (amr.some((m) => PASSKEY_METHODS.includes(m))) return 'phr'
  if (amr.includes('pwd') && amr.includes('otp')) return 'mfa'
  return undefined
}

/** Whether a sign-in at `reached` satisfies `needed` (phr satisfies mfa). */
export function satisfies(reached: AuthenticationLevel | undefined, needed: AuthenticationLevel | undefined): boolean {
  if (needed === undefined) return true
  if (reached === undefined) return false
  return AUTHENTICATION_LEVELS.indexOf(reached) <= AUTHENTICATION_LEVELS.indexOf(needed)
}

/** What decides the level a request needs. */
export interface LevelPolicy {
  /** The request's ACR values (acr_values without tenant: and idp:). */
  acrValues?: readonly string[] | undefined
  /** The client's requireMfa. */
  clientRequiresMfa?: boolean | undefined
  /** The user's requireMfa. */
  userRequiresMfa?: boolean | undefined
  /** The user has a confirmed second factor. */
  userHasFactor?: boolean | undefined
}

/**
 * The level a request needs: `phr` when acr_values asks for it; `mfa` when acr_values asks for
 * it, the client or the user requires it, or the user has a second factor; else undefined. An
 * acr_values listing values of its own (OIDC Core §3.1.2.1: voluntary) asks for nothing more.
 */
export function requiredLevel(p: LevelPolicy): AuthenticationLevel | undefined {
  if (p.acrValues?.includes('phr')) return 'phr'
  if (p.acrValues?.includes('mfa') || p.clientRequiresMfa || p.userRequiresMfa || p.userHasFactor) return 'mfa'
  return undefined
}

/**
 * What a session of `amr` still needs for a request needing `needed`: nothing, the second
 * factor the person has (a step-up: the second-step page offers their passkey first, then their
 * one-time codes), an enrolment (a person who has none), or a passkey (acr_values=phr).
 */
export type NextStep = 'none' | 'second-factor' | 'enrol' | 'passkey' | 'passkey-step'

/**
 * `passkey-step`: the passkey the person holds, asked in this session (the second-step page, which
 * keeps the methods used so far, so amr lists them all); `passkey`: the page that asks for one
 * (and signs in with it) when they hold none that can be used here.
 */
export function nextStep(
  amr: readonly string[],
  needed: AuthenticationLevel | undefined,
  userHasFactor: boolean,
  userHasPasskey = false,
): NextStep {
  if (satisfies(acrOf(amr), needed)) return 'none'
  if (needed === 'phr') return userHasPasskey ? 'passkey-step' : 'passkey'
  return userHasFactor ? 'second-factor' : 'enrol'
}

/** The second-step page's `level` parameter that asks for a passkey only (acr phr). */
export const PASSKEY_LEVEL = 'phr'

/** The page a next step is taken on, coming back to `returnTo` (a validated return target) afterwards. */
export function stepUpUrl(step: Exclude<NextStep, 'none'>, returnTo: string | undefined): string {
  const path = step === 'passkey' ? PASSKEY_SIGN_IN_PATH : step === 'enrol' ? ACCOUNT_TWO_STEP_PATH : SECOND_FACTOR_PATH
  const query = [
    ...(step === 'passkey-step' ? [`level=${PASSKEY_LEVEL}`] : []),
    ...(returnTo ? [`return_to=${encodeURIComponent(returnTo)}`] : []),
  ]
  return query.length > 0 ? `${path}?${query.join('&')}` : path
}

/** The second factors a person holds: one-time codes, and passkeys (counted only where they are offered). */
export interface HeldFactors {
  otp: boolean
  passkey: boolean
}

export interface FactorLookupDeps {
  factors: Pick<UserFactorStore, 'hasFactor'>
  /** The passkeys; a person's count as a second factor only where they are available (PASSKEYS). */
  passkeys?: Pick<Passkeys, 'available' | 'list'> | undefined
}

/** Which second factors the person holds. */
export async function heldFactors(deps: FactorLookupDeps, subjectId: string): Promise<HeldFactors> {
  const usesPasskeys = deps.passkeys?.available === true
  const [otp, passkeys] = await Promise.all([
    deps.factors.hasFactor(subjectId),
    usesPasskeys ? deps.passkeys!.list(subjectId) : Promise.resolve([]),
  ])
  return { otp, passkey: passkeys.length > 0 }
}

/** Whether the person holds any second factor (one-time codes or a usable passkey). */
export const holdsFactor = (held: HeldFactors): boolean => held.otp || held.passkey

export interface LevelCheckDeps extends FactorLookupDeps {
  users: Pick<UserStore, 'findBySubjectId'>
}

export interface LevelCheck {
  /** What the session still needs for a request of this client with these ACR values. */
  next(
    session: Pick<StoredSession, 'subjectId' | 'amr'>,
    request: { acrValues?: readonly string[] | undefined; client?: Pick<Client, 'requireMfa'> | undefined },
  ): Promise<NextStep>
}

/** The check every flow in which a person approves runs on the session, after max_age and prompt=login. */
export function createLevelCheck(deps: LevelCheckDeps): LevelCheck {
  return {
    async next(session, request) {
      // A session that already reaches phr needs nothing a lookup could add.
      if (acrOf(session.amr) === 'phr') return 'none'
      const [user, held] = await Promise.all([deps.users.findBySubjectId(session.subjectId), heldFactors(deps, session.subjectId)])
      const hasFactor = holdsFactor(held)
      const needed = requiredLevel({
        acrValues: request.acrValues,
        clientRequiresMfa: request.client?.requireMfa,
        userRequiresMfa: user?.requireMfa,
        userHasFactor: hasFactor,
      })
      return nextStep(session.amr, needed, hasFactor, held.passkey)
    },
  }
}
