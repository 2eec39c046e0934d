// Store interface, named with domain verbs; the implementation beside it (config-changes.postgres.ts)
// listens to the notifications that migration 0031's triggers send when a cached table changes.

/** Which of a replica's caches a committed change makes stale (src/stores/cached.ts). */
export type ConfigChange = 'clients' | 'resources' | 'users' | 'identityProviders'

export interface ConfigChangeStore {
  /**
   * Calls `onChange` once a change to clients (or their secrets), API scopes and resources,
   * identity resources, users or identity providers (migration 0034) is committed by anyone, and with `undefined` after the
   * subscription was re-established (some may have been missed: drop everything). Resolves to an
   * unsubscribe.
   */
  subscribe(onChange: (change: ConfigChange | undefined) => void): Promise<() => Promise<void>>
}
