// The local user behind an upstream identity (OpenID Connect Core §2: the sub an app sees never
// changes). A first sign-in creates a user linked to (scheme, upstream sub), with a generated
// subject id and the upstream's profile claims; later sign-ins find it by the link and refresh
// those claims. An upstream identity is linked to an existing local user by email only when the
// provider allows it (linkByVerifiedEmail) and the upstream says email_verified, and only when
// exactly one local user has that email: an email alone never hands over an account.
import { randomUUID } from 'node:crypto'
import type { IdentityProvider, User } from '../../domain/types.js'
import type { FederatedIdentityStore } from '../../stores/federated-identities.js'

/** OpenID Connect Core §5.1: the profile claims taken from the upstream. */
export const PROFILE_CLAIMS = ['name', 'given_name', 'family_name', 'email', 'email_verified', 'preferred_username', 'picture', 'locale']

export type AccountResult = { user: User; how: 'found' | 'created' | 'linked' }

/** The profile claims of the upstream's ID token and userinfo, as far as they have the right type. */
export function profileClaims(claims: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of PROFILE_CLAIMS) {
    const v = claims[name]
    if (name === 'email_verified' ? typeof v === 'boolean' : typeof v === 'string' && v.length <= 1000) out[name] = v
  }
  return out
}

export function createAccounts(store: FederatedIdentityStore) {
  async function create(p: IdentityProvider, sub: string, profile: Record<string, unknown>, at: number): Promise<User | undefined> {
    const readable = [profile.preferred_username, profile.email].find((v): v is string => typeof v === 'string' && v.length <= 150)
    // The username shows on our pages; a readable one when it is free, else the upstream sub.
    for (const username of [...(readable ? [`${p.scheme}:${readable}`] : []), `${p.scheme}:${sub}`]) {
      const user: User = {
        subjectId: randomUUID(),
        username,
        passwordHash: undefined,
        enabled: true,
        claims: profile,
        cibaUserCodeHash: undefined,
      }
      if (await store.createLinkedUser(user, { scheme: p.scheme, upstreamSub: sub, at })) return user
      const raced = await store.find(p.scheme, sub)
      if (raced) return raced.user
    }
    return undefined
  }

  return {
    /** The local user of this upstream identity, found, linked or created; undefined when none can be. */
    async resolve(p: IdentityProvider, sub: string, claims: Record<string, unknown>, at: number): Promise<AccountResult | undefined> {
      const profile = profileClaims(claims)
      const found = await store.find(p.scheme, sub)
      if (found) {
        await store.signedIn(p.scheme, sub, at, found.link.managesClaims ? profile : undefined)
        return { user: found.link.managesClaims ? { ...found.user, claims: profile } : found.user, how: 'found' }
      }
      if (p.linkByVerifiedEmail && profile.email_verified === true && typeof profile.email === 'string') {
        const same = await store.findUsersByEmail(profile.email)
        if (same.length === 1 && (await store.link(same[0]!.subjectId, { scheme: p.scheme, upstreamSub: sub, at }))) {
          return { user: same[0]!, how: 'linked' }
        }
      }
      const user = await create(p, sub, profile, at)
      return user && { user, how: 'created' }
    },
  }
}

export type Accounts = ReturnType<typeof createAccounts>
