// Server-wide secrets (table server_secrets), e.g. the key of every CSRF token: 256 random bits
// created on first start and shared by every replica through the database, so a form rendered by
// one replica is accepted by another. Encrypted at rest with KEY_ENCRYPTION_SECRET when it is set,
// like the signing keys (key-crypto.ts); one stored encrypted needs the same KEY_ENCRYPTION_SECRET.
// A secret stored unencrypted, before KEY_ENCRYPTION_SECRET was set, is in every copy of the data
// made until then: encrypting it in place would leave those copies able to compute valid MACs
// forever. It is replaced instead, at the first start that has KEY_ENCRYPTION_SECRET, by a new
// secret stored encrypted, and the old value is purged from the database's files. What was MACed
// with the old one (a form open in a browser, a sign-in marker) is refused once, as after any
// tampering: the person sends the form again, or signs in again.
import { randomBytes } from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import type { ServerSecretStore } from '../stores/server-secrets.js'
import { decryptAtRest, deriveKeyEncryptionKey, encryptAtRest, KeyDecryptionError } from './key-crypto.js'

export interface ServerSecretDeps {
  store: ServerSecretStore
  clock: Clock
  keyEncryptionSecret: string | undefined
  /**
   * Told when a secret stored in plaintext was just replaced by a new one, stored encrypted, and
   * whether the old value is gone from the database's files (see ServerSecretStore).
   */
  onReplaced?: (name: string, purged: boolean) => void
}

/** The 32-byte secret `name`, created (and stored) when no replica has yet. */
export async function loadServerSecret(deps: ServerSecretDeps, name: string): Promise<Buffer> {
  const aad = `server-secret:${name}`
  const key = deps.keyEncryptionSecret ? deriveKeyEncryptionKey(deps.keyEncryptionSecret) : undefined
  const fresh = () => {
    const value = randomBytes(32).toString('base64url')
    return { value: key ? encryptAtRest(value, key, aad) : value, encrypted: key !== undefined, createdAt: deps.clock.now() }
  }
  let stored = await deps.store.ensure(name, fresh())
  if (!stored.encrypted && key) {
    const { stored: now, replaced } = await deps.store.replacePlaintext(name, fresh())
    stored = now
    if (replaced) deps.onReplaced?.(name, await deps.store.purgeDeadRowVersions())
  }
  let text = stored.value
  if (stored.encrypted) {
    if (!key) throw new KeyDecryptionError(`server secret ${name} is stored encrypted but KEY_ENCRYPTION_SECRET is not set`)
    text = decryptAtRest(stored.value, key, aad, `server secret ${name}`)
  }
  const secret = Buffer.from(text, 'base64url')
  if (secret.length !== 32) throw new KeyDecryptionError(`server secret ${name} is malformed`)
  return secret
}
