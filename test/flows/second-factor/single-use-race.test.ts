// A one-time code (RFC 6238 §5.2) and a recovery code (NIST SP 800-63B §5.1.2) are each accepted
// once: when the same right code is checked several times at once (a double submit, a code read
// over a shoulder and typed in another browser), exactly one check passes and every other is
// bad_code, and what is stored says the code is spent. Many trials, because a bad interleaving
// shows in only a fraction of them; the service is driven directly on the test clock, and on
// PostgreSQL its checks run on connections of their own.
import { generate } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../../src/domain/clock.js'
import { lockoutPolicy } from '../../../src/interaction/password-check.js'
import { createSecondFactors, TOTP_PERIOD, type SecondFactors } from '../../../src/interaction/second-factor.js'
import { discardAudit } from '../../../src/observe/audit.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgFailureCounterStore } from '../../../src/stores/failure-counters.postgres.js'
import { createPgUserFactorStore } from '../../../src/stores/user-factors.postgres.js'
import { testConfig } from '../../helpers/app.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'

const TRIALS = 30
const AT_ONCE = 5

let testDb: TestDb
let factors: SecondFactors
const clock = createManualClock(Date.now())
const people = (prefix: string) => Array.from({ length: TRIALS }, (_, i) => ({ subjectId: `${prefix}-${i}`, username: `${prefix}-${i}` }))
const OTP_PEOPLE = people('otp')
const RECOVERY_PEOPLE = people('recovery')

beforeAll(async () => {
  testDb = await createTestDb()
  await applySeed(testDb.db, { users: [...OTP_PEOPLE, ...RECOVERY_PEOPLE].map((p) => ({ ...p, claims: {} })) })
  factors = createSecondFactors({
    store: createPgUserFactorStore(testDb.db),
    failures: createPgFailureCounterStore(testDb.db),
    policy: lockoutPolicy(testConfig()),
    clock,
    audit: discardAudit,
    issuerName: 'authz',
    encryptionKey: undefined,
  })
})
afterAll(() => testDb?.close())

const ctx = { address: '192.0.2.1' }
const codeAt = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) })

/** Enrols the person (the enrolment's code spends its step); returns the secret and the recovery codes. */
async function enrolled(person: { subjectId: string; username: string }) {
  const { secret } = await factors.beginEnrolment(person)
  const confirmed = await factors.confirmEnrolment(person, await codeAt(secret), ctx)
  if (!confirmed.ok) throw new Error(`enrolment refused: ${confirmed.reason}`)
  clock.advance(TOTP_PERIOD) // the next step: its code is a fresh one
  return { secret, recoveryCodes: confirmed.recoveryCodes }
}

/** Checks `code` AT_ONCE times at once; returns the results and records a trial with other than one success. */
async function race(
  person: { subjectId: string; username: string },
  kind: 'otp' | 'recovery_code',
  code: string,
  bad: string[],
  trial: number,
) {
  const results = await Promise.all(Array.from({ length: AT_ONCE }, () => factors.check(person, kind, code, ctx)))
  const accepted = results.filter((r) => r.ok).length
  if (accepted !== 1) bad.push(`trial ${trial}: ${kind} accepted ${accepted} times`)
  for (const r of results.filter((x) => !x.ok)) expect(r).toEqual({ ok: false, reason: 'bad_code' })
}

describe('the same right code checked several times at once', () => {
  it(`one-time code, ${AT_ONCE} at once, ${TRIALS} trials: accepted once, its step spent`, async () => {
    const bad: string[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const person = OTP_PEOPLE[trial]!
      const { secret } = await enrolled(person)
      const code = await codeAt(secret)
      await race(person, 'otp', code, bad, trial)
      expect((await factors.status(person.subjectId)).totp?.lastUsedAt).toBe(clock.now())
      expect(await factors.check(person, 'otp', code, ctx)).toEqual({ ok: false, reason: 'bad_code' })
    }
    expect(bad).toEqual([])
  }, 300_000)

  it(`recovery code, ${AT_ONCE} at once, ${TRIALS} trials: accepted once, nine left`, async () => {
    const bad: string[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const person = RECOVERY_PEOPLE[trial]!
      const { recoveryCodes } = await enrolled(person)
      await race(person, 'recovery_code', recoveryCodes[trial % recoveryCodes.length]!, bad, trial)
      expect((await factors.status(person.subjectId)).recoveryCodesLeft).toBe(9)
      expect(await factors.check(person, 'recovery_code', recoveryCodes[trial % recoveryCodes.length]!, ctx)).toEqual({
        ok: false,
        reason: 'bad_code',
      })
    }
    expect(bad).toEqual([])
  }, 300_000)
})
