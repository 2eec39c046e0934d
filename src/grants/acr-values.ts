// acr_values (RFC 6749 extension used by OIDC Core §3.1.2.1 and CIBA §7.1), with Duende's
// conventions: `tenant:<name>` and `idp:<name>` are instructions, not ACR values.
import type { Client } from '../domain/types.js'

export interface ParsedAcrValues {
  acrValues: string[]
  tenant: string | undefined
  idp: string | undefined
}

/**
 * Splits acr_values: the first `tenant:` value becomes the tenant, the first
 * `idp:` value the identity provider (dropped when the client's restrictions exclude it), the rest stay.
 */
export function parseAcrValues(value: string | undefined, client: Pick<Client, 'identityProviderRestrictions'>): ParsedAcrValues {
  const out: ParsedAcrValues = { acrValues: [], tenant: undefined, idp: undefined }
  for (const v of (value ?? '').split(' ')) {
    if (v === '') continue
    if (v.startsWith('tenant:') && v.length > 7) {
      out.tenant ??= v.slice(7)
    } else if (v.startsWith('idp:') && v.length > 4) {
      const idp = v.slice(4)
      const allowed = client.identityProviderRestrictions.length === 0 || client.identityProviderRestrictions.includes(idp)
      if (allowed && out.idp === undefined) out.idp = idp
    } else if (!out.acrValues.includes(v)) {
      out.acrValues.push(v)
    }
  }
  return out
}
