// Bad input never costs more than a 4xx: every parameter has a length limit, checked before any
// other work. The figures follow Duende's InputLengthRestrictions.
import { OAuthError } from '../errors.js'

/** Most parameters 100 characters, a few longer. */
export const INPUT_LIMITS: Readonly<Record<string, number>> = {
  scope: 300,
  acr_values: 300,
  resource: 512,
  token: 51_200,
  // The password grant: usernames as long as the seed file allows; long passphrases.
  username: 200,
  password: 512,
  subject_token: 51_200,
  actor_token: 51_200,
  audience: 512,
  assertion: 51_200,
  client_assertion: 51_200,
  request: 51_200,
  login_hint_token: 4000,
  id_token_hint: 4000,
  binding_message: 300,
  redirect_uri: 400,
  code_verifier: 128,
}
export const DEFAULT_INPUT_LIMIT = 100

/** Bad input never costs more than a 4xx: every parameter has a length limit. */
export function checkInputLengths(form: Record<string, string>, limits: Readonly<Record<string, number>> = INPUT_LIMITS): void {
  for (const key in form) {
    const max = limits[key] ?? DEFAULT_INPUT_LIMIT
    if (form[key]!.length > max) {
      const name = /^[a-z_]{1,40}$/.test(key) ? key : 'parameter'
      throw new OAuthError('invalid_request', `${name} is too long`)
    }
  }
}

/**
 * At the CIBA endpoint binding_message may be longer here, so that one over CIBA's own limit gets
 * its specific error (invalid_binding_message) rather than a generic "too long".
 */
export const CIBA_INPUT_LIMITS: Readonly<Record<string, number>> = { ...INPUT_LIMITS, binding_message: 4096 }
