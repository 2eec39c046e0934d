// The one decision of how strong a sign-in is and what a request still needs: the acr a session's
// amr reaches, the level a request needs, the next step, and which second factors a person holds
// (a passkey counts only where passkeys are offered).
import { describe, expect, it } from 'vitest'
import { acrOf, createLevelCheck, heldFactors, nextStep, requiredLevel, stepUpUrl } from '../../src/interaction/authentication-level.js'

const PASSWORD = ['pwd']
const PASSWORD_AND_CODE = ['pwd', 'otp', 'mfa']
const PASSWORD_AND_PASSKEY = ['pwd', 'hwk', 'mfa']

describe('acrOf', () => {
  it('gives phr for any passkey, mfa for a password and a code, nothing for a password alone', () => {
    expect(acrOf(PASSWORD)).toBeUndefined()
    expect(acrOf(PASSWORD_AND_CODE)).toBe('mfa')
    expect(acrOf(PASSWORD_AND_PASSKEY)).toBe('phr')
    expect(acrOf(['pwd', 'swk', 'mfa'])).toBe('phr')
    expect(acrOf(['hwk', 'user', 'mfa'])).toBe('phr')
    expect(acrOf(['otp'])).toBeUndefined()
  })
})

describe('requiredLevel', () => {
  it('asks mfa of a person with a second factor, a requireMfa client or user, or acr_values=mfa; phr only of acr_values=phr', () => {
    expect(requiredLevel({})).toBeUndefined()
    expect(requiredLevel({ userHasFactor: true })).toBe('mfa')
    expect(requiredLevel({ clientRequiresMfa: true })).toBe('mfa')
    expect(requiredLevel({ userRequiresMfa: true })).toBe('mfa')
    expect(requiredLevel({ acrValues: ['mfa'] })).toBe('mfa')
    expect(requiredLevel({ acrValues: ['phr'], userHasFactor: true })).toBe('phr')
    expect(requiredLevel({ acrValues: ['urn:other'] })).toBeUndefined()
  })
})

describe('nextStep', () => {
  it('asks a password session for the factor the person has, sends one without to enrol, and phr to the passkey page', () => {
    expect(nextStep(PASSWORD, undefined, false)).toBe('none')
    expect(nextStep(PASSWORD, 'mfa', true)).toBe('second-factor')
    expect(nextStep(PASSWORD, 'mfa', false)).toBe('enrol')
    expect(nextStep(PASSWORD, 'phr', true)).toBe('passkey')
    expect(nextStep(PASSWORD_AND_CODE, 'mfa', true)).toBe('none')
    expect(nextStep(PASSWORD_AND_CODE, 'phr', true)).toBe('passkey')
    // A person who holds a passkey takes it in this session; one who does not is asked for one.
    expect(nextStep(PASSWORD, 'phr', true, true)).toBe('passkey-step')
    expect(nextStep(PASSWORD_AND_CODE, 'phr', true, true)).toBe('passkey-step')
    expect(nextStep(PASSWORD_AND_CODE, 'mfa', true, true)).toBe('none')
    // A passkey after the password reaches phr, which satisfies both levels.
    expect(nextStep(PASSWORD_AND_PASSKEY, 'mfa', true)).toBe('none')
    expect(nextStep(PASSWORD_AND_PASSKEY, 'phr', true)).toBe('none')
  })

  it('names the page of each step, with the way back', () => {
    expect(stepUpUrl('second-factor', '/connect/authorize?a=1')).toBe('/account/sign-in/code?return_to=%2Fconnect%2Fauthorize%3Fa%3D1')
    expect(stepUpUrl('enrol', undefined)).toBe('/account/two-step')
    expect(stepUpUrl('passkey-step', '/connect/authorize?a=1')).toBe(
      '/account/sign-in/code?level=phr&return_to=%2Fconnect%2Fauthorize%3Fa%3D1',
    )
    expect(stepUpUrl('passkey', undefined)).toBe('/account/sign-in/passkey')
    expect(stepUpUrl('passkey', undefined)).toBe('/account/sign-in/passkey')
  })
})

/** Stores in memory: who has codes, who has passkeys, who must use a second factor. */
function lookups(o: { codes?: string[]; passkeys?: string[]; requireMfa?: string[]; available?: boolean }) {
  const lists: string[] = []
  const passkeys = {
    available: o.available ?? true,
    list: async (subjectId: string) => {
      lists.push(subjectId)
      return (o.passkeys ?? []).includes(subjectId) ? [{ subjectId } as never] : []
    },
  }
  const factors = { hasFactor: async (subjectId: string) => (o.codes ?? []).includes(subjectId) }
  const users = {
    findBySubjectId: async (subjectId: string) => ({ subjectId, requireMfa: (o.requireMfa ?? []).includes(subjectId) }) as never,
  }
  return { passkeys, factors, users, lists }
}

describe('heldFactors and the level check', () => {
  it('counts a passkey as a second factor where passkeys are offered', async () => {
    const d = lookups({ codes: ['both', 'codes'], passkeys: ['both', 'key'] })
    expect(await heldFactors(d, 'both')).toEqual({ otp: true, passkey: true })
    expect(await heldFactors(d, 'key')).toEqual({ otp: false, passkey: true })
    expect(await heldFactors(d, 'codes')).toEqual({ otp: true, passkey: false })
    expect(await heldFactors(d, 'none')).toEqual({ otp: false, passkey: false })
    const check = createLevelCheck(d)
    expect(await check.next({ subjectId: 'key', amr: PASSWORD }, {})).toBe('second-factor')
    expect(await check.next({ subjectId: 'key', amr: PASSWORD_AND_PASSKEY }, {})).toBe('none')
    expect(await check.next({ subjectId: 'none', amr: PASSWORD }, {})).toBe('none')
    expect(await check.next({ subjectId: 'none', amr: PASSWORD }, { client: { requireMfa: true } })).toBe('enrol')
    expect(await check.next({ subjectId: 'none', amr: PASSWORD }, { acrValues: ['mfa'] })).toBe('enrol')
  })

  it('does not count (nor look up) passkeys where they are not offered', async () => {
    const d = lookups({ passkeys: ['key'], requireMfa: ['key'], available: false })
    expect(await heldFactors(d, 'key')).toEqual({ otp: false, passkey: false })
    expect(d.lists).toEqual([])
    const check = createLevelCheck(d)
    expect(await check.next({ subjectId: 'key', amr: PASSWORD }, {})).toBe('enrol')
    expect(await heldFactors({ factors: d.factors }, 'key')).toEqual({ otp: false, passkey: false })
  })
})
