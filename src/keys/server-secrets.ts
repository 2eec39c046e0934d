// Server-wide secrets (table server_secrets), e.g. the key of every CSRF token: 256 random bits
// created on first start and shared by every replica through the database, so a form rendered by
// one replica is accepted by another. Encrypted at rest with KEY_ENCRYPTION_SECRET when it is set,
// like the signing keys (key-crypto.ts). A secret stored unencrypted stays readable after
// KEY_ENCRYPTION_SECRET is set, and is encrypted at the next start that has it; one stored
// encrypted needs the same KEY_ENCRYPTION_SECRET.
import { randomBytes } from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import type { ServerSecretStore } from '../stores/server-secrets.js'
import { decryptAtRest, deriveKeyEncryptionKey, encryptAtRest, KeyDecryptionError } from './key-crypto.js'

export interface ServerSecretDeps {
  store: ServerSecretStore
  clock: Clock
  keyEncryptionSecret: string | undefined
  /** Told when a secret stored in plaintext was just encrypted with KEY_ENCRYPTION_SECRET. */
  onEncrypted?: (name: string) => void
}

/** The 32-byte secret `name`, created (and stored) when no replica has yet. */
export async function loadServerSecret(deps: ServerSecretDeps, name: string): Promise<Buffer> {
  const aad = `server-secret:${name}`
  const key = deps.keyEncryptionSecret ? deriveKeyEncryptionKey(deps.keyEncryptionSecret) : undefined
  const fresh = randomBytes(32).toString('base64url')
  const stored = await deps.store.ensure(name, {
    value: key ? encryptAtRest(fresh, key, aad) : fresh,
    encrypted: key !== undefined,
    createdAt: deps.clock.now(),
  })
  let text = stored.value
  if (stored.encrypted) {
    if (!key) throw new KeyDecryptionError(`server secret ${name} is stored encrypted but KEY_ENCRYPTION_SECRET is not set`)
    text = decryptAtRest(stored.value, key, aad, `server secret ${name}`)
  } else if (key) {
    // Stored before KEY_ENCRYPTION_SECRET was set: encrypt it now, in place.
    await deps.store.storeEncrypted(name, encryptAtRest(text, key, aad))
    deps.onEncrypted?.(name)
  }
  const secret = Buffer.from(text, 'base64url')
  if (secret.length !== 32) throw new KeyDecryptionError(`server secret ${name} is malformed`)
  return secret
}
