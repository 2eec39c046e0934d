// acr_values (RFC 6749 extension used by OIDC Core §3.1.2.1 and CIBA §7.1), with Duende's
// conventions: `tenant:<name>` and `idp:<name>` are instructions, not ACR values. Both end up in
// tokens and on the approval page, so a client asserts only what it is configured for, and every
// value is held to binding_message's rule (CIBA §7.1): no control or format characters (bidi
// overrides, zero-width characters), bounded length.
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'

export interface ParsedAcrValues {
  acrValues: string[]
  tenant: string | undefined
  idp: string | undefined
}

/** The acr values a password sign-in satisfies (emitted as `acr`) on every page a person signs in on. */
export const SATISFIED_ACR_VALUES: readonly string[] = ['1', 'pwd']

/** The longest tenant, idp or ACR value (and seed entry for allowedTenants). */
export const ACR_VALUE_MAX = 100

// Cc and Cf (bidi controls, zero-width characters, soft hyphen), unpaired surrogates, and the line
// and paragraph separators: text that displays as something other than what it is.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u

/** Whether `s` holds a control or format character (what a person must never be shown unawares). */
export function hasControlOrFormatCharacters(s: string): boolean {
  return UNPRINTABLE.test(s)
}

const invalid = (description: string) => new OAuthError('invalid_request', description)

/**
 * Splits acr_values: a `tenant:` value becomes the tenant, an `idp:` value the identity provider,
 * the rest stay ACR values. A tenant must be one of the client's allowedTenants; anything else is
 * invalid_request. Where a person signs in, `idpNames` lists what `idp:` may name
 * (src/interaction/identity-providers.ts idpNames: an enabled provider the client may use, or
 * `local`): idp is an instruction to forward the sign-in, never a label. Without a sign-in
 * (client_credentials), an idp must be one of the client's identityProviderRestrictions.
 */
export function parseAcrValues(
  value: string | undefined,
  client: Pick<Client, 'identityProviderRestrictions' | 'allowedTenants'>,
  idpNames?: ReadonlySet<string>,
): ParsedAcrValues {
  const out: ParsedAcrValues = { acrValues: [], tenant: undefined, idp: undefined }
  if (value === undefined) return out
  if (UNPRINTABLE.test(value)) throw invalid('acr_values holds control or format characters')
  for (const v of value.split(' ')) {
    if (v === '') continue
    const kind = v.startsWith('tenant:') && v.length > 7 ? 'tenant' : v.startsWith('idp:') && v.length > 4 ? 'idp' : 'acr'
    const name = kind === 'acr' ? v : v.slice(kind.length + 1)
    if (name.length > ACR_VALUE_MAX) throw invalid('acr_values holds a value that is too long')
    if (kind === 'tenant') {
      if (out.tenant !== undefined) throw invalid('acr_values holds more than one tenant')
      if (!client.allowedTenants.includes(name)) throw invalid('acr_values holds a tenant this client may not assert')
      out.tenant = name
    } else if (kind === 'idp') {
      if (out.idp !== undefined) throw invalid('acr_values holds more than one idp')
      const allowed = idpNames ? idpNames.has(name) : client.identityProviderRestrictions.includes(name)
      if (!allowed) throw invalid('acr_values holds an idp this client may not assert')
      out.idp = name
    } else if (!out.acrValues.includes(name)) {
      out.acrValues.push(name)
    }
  }
  return out
}
