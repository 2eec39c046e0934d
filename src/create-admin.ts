// The admin API's composition root: its listener (src/admin/server.ts) given the stores as the
// database has them now, in one transaction per write under the admin write lock, with the seed
// file's apply (src/seed/apply.ts) for writes in the seed's shapes, and the Core's token reader,
// clock and audit. Built when ADMIN_PORT is set, and on the embedded database for the local CLI
// (src/admin/local-access.ts).
import type { AdminStores } from './admin/deps.js'
import { newLocalCredential, serveLocalAdmin, type LocalAdmin } from './admin/local-access.js'
import { createAdminServer, type AdminListener } from './admin/server.js'
import type { Core } from './core.js'
import type { Db, Queryable } from './db/db.js'
import { appliedMigrations } from './db/migrate.js'
import { checkSeed, seedWarningsFor, writeSeedIn } from './seed/apply.js'
import { lockAdminWrites } from './stores/admin-writes.postgres.js'
import { createPgClientStore } from './stores/clients.postgres.js'
import { createPgResourceStore } from './stores/resources.postgres.js'
import { createPgFailureCounterStore } from './stores/failure-counters.postgres.js'
import { createPgFederatedIdentityStore } from './stores/federated-identities.postgres.js'
import { createPgIdentityProviderStore } from './stores/identity-providers.postgres.js'
import { createPgUserFactorStore } from './stores/user-factors.postgres.js'
import { createPgPasskeyStore } from './stores/passkeys.postgres.js'
import { createPgUserSessionStore } from './stores/user-sessions.postgres.js'
import { createPgUserStore } from './stores/users.postgres.js'

function storesOn(q: Queryable): AdminStores {
  return {
    clients: createPgClientStore(q),
    users: createPgUserStore(q),
    resources: createPgResourceStore(q),
    sessions: createPgUserSessionStore(q),
    failures: createPgFailureCounterStore(q),
    identityProviders: createPgIdentityProviderStore(q),
    federatedIdentities: createPgFederatedIdentityStore(q),
    factors: createPgUserFactorStore(q),
    passkeys: createPgPasskeyStore(q),
  }
}

export async function createAdmin(core: Core, db: Db, opts: { localCredential?: string } = {}): Promise<AdminListener> {
  // Upstream identity providers' client secrets are encrypted at rest as the seed file's are.
  const atRest = { keyEncryptionSecret: core.config.keyEncryptionSecret }
  return createAdminServer(
    {
      read: storesOn(db),
      write: (fn) =>
        db.transaction(async (tx) => {
          await lockAdminWrites(tx)
          return fn({
            ...storesOn(tx),
            // One resource's PUT: an identity provider's clientSecret left out is kept, as a client's secrets are.
            applySeed: async (input) =>
              void (await writeSeedIn(tx, input, undefined, undefined, { ...atRest, keepOmittedClientSecrets: true })),
            async applySeedDocument(input) {
              const checked = checkSeed(input)
              const counts = await writeSeedIn(tx, input, undefined, checked, atRest)
              return { counts, warnings: checked.seed ? await seedWarningsFor(tx, checked.seed) : [] }
            },
          })
        }),
      tokenReader: core.tokenReader,
      dpop: core.dpop,
      keys: core.keys,
      consents: core.consent,
      cibaRequests: core.stores.cibaRequests,
      registrationTokens: core.stores.registrationTokens,
      appliedMigrations: () => appliedMigrations(db),
      clock: core.clock,
      audit: core.audit,
      etagKey: await core.serverSecret('admin-etag'),
      realm: core.config.issuer,
    },
    {
      logger: core.logger,
      requestTimeoutSeconds: core.config.httpRequestTimeout,
      ...(opts.localCredential === undefined ? {} : { localCredential: opts.localCredential }),
    },
  )
}

/** The admin API for the CLI of the embedded database's DATA_DIR, with a new credential written there. */
export async function createLocalAdmin(core: Core, db: Db, dataDir: string): Promise<LocalAdmin> {
  const credential = newLocalCredential()
  return serveLocalAdmin(await createAdmin(core, db, { localCredential: credential }), dataDir, credential)
}
