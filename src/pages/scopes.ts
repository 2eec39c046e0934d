// One scope as a person reads it on a decision screen: a short label and, when it adds
// something, a sentence. The seed's texts come first; the standard OpenID Connect scopes (OIDC
// Core §5.4, §11) have texts in every language; any other scope shows its name.
import type { ScopeDescription } from '../interaction/scope-descriptions.js'
import type { Messages, PlainKey } from './messages/index.js'

const STANDARD: Readonly<Record<string, readonly [PlainKey, PlainKey]>> = {
  openid: ['scope.openid', 'scope.openid.about'],
  profile: ['scope.profile', 'scope.profile.about'],
  email: ['scope.email', 'scope.email.about'],
  address: ['scope.address', 'scope.address.about'],
  phone: ['scope.phone', 'scope.phone.about'],
  offline_access: ['scope.offline_access', 'scope.offline_access.about'],
}

/** Letters and digits only, lower case: "Stay signed in." and "stay signed in" say the same. */
const gist = (s: string) => s.toLocaleLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')

/** The scope's label and sentence; the sentence is left out when it only repeats the label. */
export function scopeLine(s: ScopeDescription, m: Messages): { label: string; about: string | undefined } {
  const standard = Object.hasOwn(STANDARD, s.name) ? STANDARD[s.name] : undefined
  const label = s.displayName ?? (standard ? m.text(standard[0]) : s.name)
  const about = s.description ?? (standard ? m.text(standard[1]) : undefined)
  return { label, about: about !== undefined && gist(about) !== gist(label) ? about : undefined }
}
