// LISTEN on the channel that migration 0031's triggers NOTIFY, with the name of the cache a change
// touches as the payload.
import type { Db } from '../db/db.js'
import type { ConfigChange, ConfigChangeStore } from './config-changes.js'

export const CONFIG_CHANGES_CHANNEL = 'authz_config_changes'

const CHANGES: ReadonlySet<string> = new Set<ConfigChange>(['clients', 'resources', 'users', 'identityProviders'])

export function createPgConfigChangeStore(db: Db): ConfigChangeStore {
  return {
    subscribe(onChange) {
      return db.listen(CONFIG_CHANGES_CHANNEL, (payload) => {
        if (payload === undefined) return onChange(undefined)
        if (CHANGES.has(payload)) onChange(payload as ConfigChange)
      })
    },
  }
}
