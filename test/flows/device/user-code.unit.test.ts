// RFC 8628 §6.1 user codes: the alphabet, the shown form, and what a person may type back.
import { describe, expect, it } from 'vitest'
import { formatUserCode, newUserCode, normalizeUserCode, USER_CODE_ALPHABET } from '../../../src/flows/device/user-code.js'

describe('device user codes', () => {
  it('are eight characters of 20 consonants, no vowels or digits, every one of them used', () => {
    expect(USER_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ')
    const seen = new Set<string>()
    for (let i = 0; i < 500; i++) {
      const code = newUserCode()
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/)
      for (const c of code) seen.add(c)
    }
    expect(seen.size).toBe(20)
  })

  it('are shown as XXXX-XXXX', () => {
    expect(formatUserCode('BCDFGHJK')).toBe('BCDF-GHJK')
  })

  it('are read back in any case, with or without the dash or spaces', () => {
    for (const typed of ['BCDF-GHJK', 'bcdf-ghjk', 'bcdfghjk', 'BcDf GhJk', ' bcdf-ghjk ', 'b-c-d-f-g-h-j-k']) {
      expect(normalizeUserCode(typed)).toBe('BCDFGHJK')
    }
  })

  it('anything else is not a code: wrong length, a vowel, a digit, other punctuation, too long', () => {
    for (const typed of [
      '',
      'BCDF-GHJ',
      'BCDF-GHJKL',
      'BCDF-GHJA',
      'BCDF-GHJ1',
      'BCDF_GHJK',
      'BCDF.GHJK',
      `BCDFGHJK${' '.repeat(40)}`,
      'ßCDF-GHJK',
    ]) {
      expect(normalizeUserCode(typed)).toBeUndefined()
    }
  })
})
