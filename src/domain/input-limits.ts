// Bad input never costs more than a 4xx, and nothing unchecked reaches the database: every
// parameter has a length limit (figures after Duende's InputLengthRestrictions) and no value may
// hold a control character (PostgreSQL text cannot store NUL). Errors name the parameter only
// when it is one we know, so an error_description never echoes input (RFC 6749 §5.2).
// Parameter names are the request's: they are looked up only as a table's own entries, so that a
// name every object inherits (constructor, toString, __proto__) finds nothing of ours.
import { OAuthError, type OAuthErrorCode } from '../errors.js'

/** Most parameters 100 characters, a few longer. */
export const INPUT_LIMITS: Readonly<Record<string, number>> = {
  scope: 300,
  acr_values: 300,
  resource: 512,
  token: 51_200,
  // The password grant: usernames as long as the seed file allows; long passphrases.
  username: 200,
  password: 512,
  // The account page's password change.
  current_password: 512,
  new_password: 512,
  confirm_password: 512,
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
  // Passkeys: the browser's WebAuthn response as JSON (attestation "none"), a credential id
  // (WebAuthn §6.1: at most 1023 bytes, base64url) and the name a person gives one.
  webauthn_response: 16_384,
  credential_id: 1400,
  passkey_name: 100,
}
export const DEFAULT_INPUT_LIMIT = 100

/** Parameter names an error_description may repeat: the specs' and our forms', never the request's own. */
const KNOWN_PARAMETERS: ReadonlySet<string> = new Set([
  ...Object.keys(INPUT_LIMITS),
  'grant_type',
  'client_id',
  'client_secret',
  'client_assertion_type',
  'refresh_token',
  'code',
  'state',
  'nonce',
  'response_type',
  'device_code',
  'token_type_hint',
  'auth_req_id',
  'login_hint',
  'user_code',
  'requested_expiry',
  'client_notification_token',
  'subject_token_type',
  'actor_token_type',
  'requested_token_type',
  'csrf',
  'decision',
])

/** The parameter's name when it is a known one; otherwise a phrase that repeats nothing from the request. */
export function parameterLabel(name: string): string {
  return KNOWN_PARAMETERS.has(name) ? name : 'a parameter'
}

/** `table[name]` when the table itself holds `name`; never what it inherits from Object.prototype. */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined
}

// Cc: C0 controls (NUL included), DEL and C1 controls. Cs: an unpaired UTF-16 surrogate (a JSON
// string may carry one), which no encoding can store. Neither belongs in any parameter.
const CONTROL = /[\p{Cc}\p{Cs}]/u

/**
 * Error codes for parameters whose spec gives an unacceptable value its own code at one endpoint
 * (CIBA Core §13: invalid_binding_message). The endpoint passes its own; elsewhere it is invalid_request.
 */
export type ParameterErrorCodes = ReadonlyMap<string, OAuthErrorCode>
const NO_OWN_CODES: ParameterErrorCodes = new Map()

export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value)
}

/** invalid_request when `value` holds a control character; `label` is what the description calls it. */
export function checkNoControlCharacters(value: string, label: string, code: OAuthErrorCode = 'invalid_request'): void {
  if (CONTROL.test(value)) throw new OAuthError(code, `${label} contains control characters`)
}

/** One parameter's name and value (see parameterLabel); `prefix` places it, e.g. inside a request object. */
export function checkParameter(name: string, value: string, prefix = '', codes: ParameterErrorCodes = NO_OWN_CODES): void {
  checkNoControlCharacters(name, `${prefix}a parameter name`)
  checkNoControlCharacters(value, `${prefix}${parameterLabel(name)}`, codes.get(name))
}

export function checkParameters(params: Record<string, string>, prefix = '', codes: ParameterErrorCodes = NO_OWN_CODES): void {
  for (const name of Object.keys(params)) checkParameter(name, params[name]!, prefix, codes)
}

/** Bad input never costs more than a 4xx: every parameter has a length limit. */
export function checkInputLengths(form: Record<string, string>, limits: Readonly<Record<string, number>> = INPUT_LIMITS): void {
  for (const key of Object.keys(form)) {
    const max = ownEntry(limits, key) ?? DEFAULT_INPUT_LIMIT
    if (form[key]!.length > max) throw new OAuthError('invalid_request', `${parameterLabel(key)} is too long`)
  }
}

/**
 * At the CIBA endpoint binding_message may be longer here, so that one over CIBA's own limit gets
 * its specific error (invalid_binding_message) rather than a generic "too long".
 */
export const CIBA_INPUT_LIMITS: Readonly<Record<string, number>> = {
  ...INPUT_LIMITS,
  binding_message: 4096,
  // CIBA Core §7.1: a bearer token of the client's making (src/flows/ciba/service.ts NOTIFICATION_TOKEN_MAX).
  client_notification_token: 1024,
}
