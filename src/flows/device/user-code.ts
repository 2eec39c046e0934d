// RFC 8628 §6.1 user codes: eight characters from the 20 consonants of RFC 8628's example
// ("BCDFGHJKLMNPQRSTVWXZ": no vowels, so no words; no digits, so no 0/O or 1/I look-alikes),
// shown as BCDF-GHJK, about 34.5 bits. Typed back in any case, with or without the dash or
// spaces: everything but the code's own characters is ignored (§6.1), so the stored form is the
// eight upper-case letters.
import { randomInt } from 'node:crypto'

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
export const USER_CODE_LENGTH = 8

/** A new user code in its stored (normalized) form. */
export function newUserCode(): string {
  let code = ''
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]
  return code
}

/** How the person reads it: BCDF-GHJK. */
export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`
}

/** Longest input looked at: a code with generous separators; anything longer is not a code. */
const TYPED_MAX = 32

/**
 * The normalized code of what a person typed, or undefined when it cannot be one of ours:
 * upper-cased, dashes and white space dropped, then exactly eight characters of the alphabet.
 */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > TYPED_MAX) return undefined
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== USER_CODE_LENGTH) return undefined
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return undefined
  return code
}
