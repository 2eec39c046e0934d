// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (identity-providers.postgres.ts) is the SQL. The seed file writes the
// rows (src/stores/seed.postgres.ts); the client secret comes back as stored, decrypted by its user.
import type { IdentityProvider } from '../domain/types.js'

export interface IdentityProviderStore {
  findByScheme(scheme: string): Promise<IdentityProvider | undefined>
  /** Every provider, by scheme (the sign-in page filters the enabled ones the client may use). */
  list(): Promise<IdentityProvider[]>
  /** Removes the provider (the admin API); false when there was none. Linked identities stay, for the scheme's return. */
  remove(scheme: string): Promise<boolean>
}
