// Keys stored in plaintext, found once KEY_ENCRYPTION_SECRET is set. Every copy of the data made
// until then (a backup, a copied DATA_DIR, the write-ahead log) holds them, so encrypting them in
// place would leave whoever has such a copy able to sign tokens for as long as the keys live.
// They are replaced instead, as by a rotation: a new key per algorithm, stored encrypted,
// published now and signing after KEY_ACTIVATION_DELAY (a new key is announced before it signs);
// the old key signs until then, its private part encrypted meanwhile, and is erased once the new
// one signs; its public part stays published until the last token it may have signed has
// expired (retire_at), and then the stolen copies are worth nothing.
import type { SigningAlg } from '../config.js'
import type { SigningKeyWriter, StoredSigningKey } from '../stores/signing-keys.js'
import { encryptPrivateKey } from './key-crypto.js'
import { generateSigningKey } from './key-material.js'
import type { KeyReplacement } from './signing-keys.js'

/** Keys that never sign again at `at`: a newer key of their alg has activated by then. */
export function supersededAt(keys: StoredSigningKey[], at: number): Set<string> {
  const newer = (n: StoredSigningKey, k: StoredSigningKey) =>
    n.activateAt > k.activateAt || (n.activateAt === k.activateAt && n.createdAt > k.createdAt)
  return new Set(keys.filter((k) => keys.some((n) => n.alg === k.alg && n.activateAt <= at && newer(n, k))).map((k) => k.kid))
}

export interface ReplacementPlan {
  now: number
  activateAt: number
  /** When the replaced keys stop being published: activateAt plus the longest token lifetime. */
  retireAt: number
  encryptionKey: Buffer
}

/**
 * Inside the key lock: replaces every key still signing or about to (current or pending) whose
 * private part is stored in plaintext. Keys already superseded are left to erasePrivateParts.
 * Returns the replacements, and whether any plaintext private part was found at all (the caller
 * then purges the old row versions from the database's files).
 */
export async function replacePlaintextKeys(
  w: SigningKeyWriter,
  plan: ReplacementPlan,
): Promise<{ replaced: KeyReplacement[]; foundPlaintext: boolean; created: StoredSigningKey[] }> {
  const all = await w.list()
  const superseded = supersededAt(all, plan.now)
  const plaintext = all.filter((k) => !k.encrypted && k.privateJwk !== undefined)
  const live = plaintext.filter((k) => !superseded.has(k.kid))
  for (const k of live) await w.storeEncrypted(k.kid, encryptPrivateKey(k.privateJwk!, plan.encryptionKey, k.kid))
  const replaced: KeyReplacement[] = []
  const created: StoredSigningKey[] = []
  for (const alg of [...new Set<SigningAlg>(live.map((k) => k.alg))].sort()) {
    const key = await generateSigningKey(alg, { createdAt: plan.now, activateAt: plan.activateAt }, plan.encryptionKey)
    await w.insert(key)
    await w.retireOthers(alg, key.kid, plan.retireAt)
    created.push(key)
    for (const k of live) if (k.alg === alg) replaced.push({ kid: k.kid, alg, replacedBy: key.kid, signsUntil: plan.activateAt })
  }
  return { replaced, foundPlaintext: plaintext.length > 0, created }
}
