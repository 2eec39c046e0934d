// Signing keys: created on first start, shared by every replica through the
// signing_keys table, rotated with a publication delay, retired once nothing they signed can
// still be valid. sign() and verify() never touch the database: keys live in memory and are
// reloaded in the background every `refreshSeconds`, and at once (at most every 5 s) when
// verify() meets an unknown kid. A new key is published KEY_ACTIVATION_DELAY before it signs,
// so a replica whose cache is up to `refreshSeconds` old still verifies it, and the JWKS max-age
// (src/flows/discovery/service.ts) is what the delay leaves after one reload period.
// Status is derived from times and the injected Clock: pending (activate_at in the future),
// current (the newest activated key of its alg: signs), retired (superseded: verifies only, and
// published until retire_at). A superseded key never signs again, so its private part is not
// kept: not in memory, and not in the database, from the first reload after its successor
// activates (at most `refreshSeconds` later on a running replica, else at the next start).
import { KEY_RELOAD_SECONDS, SIGNING_ALGS, type Config, type SigningAlg } from '../config.js'
import type { Clock } from '../domain/clock.js'
import type { SigningKeyStore, SigningKeyWriter, StoredSigningKey } from '../stores/signing-keys.js'
import { signCompact, decodeCompact, typMatches, verifySignature } from '../tokens/jwt.js'
import { deriveKeyEncryptionKey } from './key-crypto.js'
import { generateSigningKey, loadSigningKey, type LoadedKey } from './key-material.js'
import { replacePlaintextKeys, supersededAt, type ReplacementPlan } from './plaintext-keys.js'
import type { KeyInfo, SigningKeyService } from './signing-keys.js'
import type { AuditSink } from '../observe/audit.js'

export interface KeyServiceDeps {
  config: Pick<Config, 'keyEncryptionSecret' | 'keyActivationDelay' | 'accessTokenSigningAlg' | 'accessTokenLifetime' | 'idTokenLifetime'>
  store: SigningKeyStore
  clock: Clock
  /** Background reload failures are reported here (the previous keys stay in use). */
  onRefreshError?: (err: unknown) => void
  refreshSeconds?: number
  /** key.rotated for every key this service creates (the first ones included). */
  audit?: AuditSink
}

const UNKNOWN_KID_RELOAD_MS = 5_000

const isPublished = (k: StoredSigningKey, now: number) => k.retireAt === undefined || k.retireAt > now

/** The key that signs for `alg` at `now`: the newest one already activated. */
function currentOf<T extends { stored: StoredSigningKey }>(keys: T[], alg: SigningAlg, now: number): T | undefined {
  let best: T | undefined
  for (const k of keys) {
    const s = k.stored
    if (s.alg !== alg || s.activateAt > now || !isPublished(s, now)) continue
    if (!best || s.activateAt > best.stored.activateAt || (s.activateAt === best.stored.activateAt && s.createdAt > best.stored.createdAt))
      best = k
  }
  return best
}

export function createSigningKeyService(deps: KeyServiceDeps): SigningKeyService {
  const { config, store, clock } = deps
  const encryptionKey = config.keyEncryptionSecret ? deriveKeyEncryptionKey(config.keyEncryptionSecret) : undefined
  const refreshMs = (deps.refreshSeconds ?? KEY_RELOAD_SECONDS) * 1000
  const required = [...new Set<SigningAlg>(['RS256', 'ES256', config.accessTokenSigningAlg])]

  let keys: LoadedKey[] = []
  let byKid = new Map<string, LoadedKey>()
  let loadedAt = -Infinity
  let lastUnknownKidReload = -Infinity
  let reloading: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined

  /** Loads the published keys; erases the private parts of those superseded. Returns the kids erased. */
  async function reload(): Promise<string[]> {
    const now = clock.now()
    const rows = await store.list(now)
    const superseded = supersededAt(rows, now)
    // A key's material never changes once written (retire_at is set, the private part erased or
    // encrypted): reuse what is already imported, minus the private part once superseded.
    const next = rows.map((r) => {
      const canSign = !superseded.has(r.kid) && r.privateJwk !== undefined
      const have = byKid.get(r.kid)
      if (have && (have.privateKey !== undefined || !canSign))
        return { ...have, stored: r, privateKey: canSign ? have.privateKey : undefined }
      return loadSigningKey(r, encryptionKey, canSign)
    })
    keys = next
    byKid = new Map(next.map((k) => [k.stored.kid, k]))
    loadedAt = now
    return rows.some((r) => superseded.has(r.kid) && r.privateJwk !== undefined) ? store.erasePrivateParts(now) : []
  }

  /** The longest lifetime of a token a key may sign (seconds): how long it stays published after it stops signing. */
  async function longestTokenLifetime(w: SigningKeyWriter): Promise<number> {
    return Math.max(config.accessTokenLifetime, config.idTokenLifetime, (await w.maxClientAccessTokenLifetime()) ?? 0)
  }

  /** A replacement of plaintext keys is a rotation: announced now, signing after the delay. */
  async function replacementPlan(w: SigningKeyWriter, now: number, key: Buffer): Promise<ReplacementPlan> {
    const activateAt = now + config.keyActivationDelay * 1000
    return { now, activateAt, retireAt: activateAt + (await longestTokenLifetime(w)) * 1000, encryptionKey: key }
  }

  function reloadInBackground(): Promise<void> {
    reloading ??= reload()
      .then(() => {})
      .catch((err: unknown) => deps.onRefreshError?.(err))
      .finally(() => {
        reloading = undefined
      })
    return reloading
  }

  function maybeRefresh(now: number) {
    if (now - loadedAt >= refreshMs) void reloadInBackground()
  }

  function info(k: StoredSigningKey, all: StoredSigningKey[], now: number): KeyInfo {
    const wrapped = all.map((s) => ({ stored: s }))
    const status = k.activateAt > now ? 'pending' : currentOf(wrapped, k.alg, now)?.stored.kid === k.kid ? 'current' : 'retired'
    const { kid, alg, createdAt, activateAt, retireAt, encrypted } = k
    const privateKey = k.privateJwk === undefined ? 'erased' : encrypted ? 'encrypted' : 'plaintext'
    return { kid, alg, createdAt, activateAt, retireAt, status, encrypted, privateKey }
  }

  return {
    async ensureKeys() {
      // Load first: a missing or wrong KEY_ENCRYPTION_SECRET fails here, before anything is written.
      const erased = await reload()
      const now = clock.now()
      const created: Array<{ key: StoredSigningKey; reason: string }> = []
      const plaintext = await store.locked(async (w) => {
        // Keys stored before KEY_ENCRYPTION_SECRET was set are replaced, never encrypted in place.
        const found = encryptionKey ? await replacePlaintextKeys(w, await replacementPlan(w, now, encryptionKey)) : undefined
        for (const key of found?.created ?? []) created.push({ key, reason: 'plaintext_key' })
        const have = new Set(await w.unretiredAlgs())
        for (const alg of required) {
          if (have.has(alg)) continue
          const key = await generateSigningKey(alg, { createdAt: now, activateAt: now }, encryptionKey)
          await w.insert(key)
          created.push({ key, reason: 'first_key' })
        }
        return found
      })
      erased.push(...(await store.erasePrivateParts(now)))
      // retire_at is when the last token the key may have signed expires (see rotate).
      const removed = (await store.removeRetired(now, 1000)).sort()
      // The plaintext is still in the old row versions: gone from the table, not yet from its files.
      const purged = plaintext?.foundPlaintext ? await store.purgeDeadRowVersions() : undefined
      for (const { key, reason } of created) deps.audit?.emit({ event: 'key.rotated', kid: key.kid, alg: key.alg, reason })
      erased.push(...(await reload()))
      if (!timer) {
        timer = setInterval(() => void reloadInBackground(), refreshMs)
        timer.unref()
      }
      return {
        replaced: plaintext?.replaced ?? [],
        erased: [...new Set(erased)].sort(),
        removed,
        ...(purged === undefined ? {} : { purged }),
      }
    },

    async sign(payload, opts) {
      const now = clock.now()
      maybeRefresh(now)
      const key = currentOf(keys, opts.alg, now)
      if (!key?.privateKey) throw new Error(`no signing key for ${opts.alg}`)
      return signCompact({ alg: opts.alg, kid: key.stored.kid, typ: opts.typ }, payload, key.privateKey)
    },

    async verify(jwt, opts) {
      const { header, payload, signingInput, signature } = decodeCompact(jwt)
      const alg = header.alg as SigningAlg
      if (!SIGNING_ALGS.includes(alg)) throw new Error('invalid JWT: unsupported alg')
      if (header.crit !== undefined) throw new Error('invalid JWT: unsupported crit') // RFC 7515 §4.1.11
      if (typeof header.kid !== 'string') throw new Error('invalid JWT: no kid')
      if (opts?.typ !== undefined && !typMatches(header.typ, opts.typ)) throw new Error('invalid JWT: unexpected typ')
      const now = clock.now()
      maybeRefresh(now)
      let key = byKid.get(header.kid)
      if (!key && now - lastUnknownKidReload >= UNKNOWN_KID_RELOAD_MS) {
        lastUnknownKidReload = now
        await reloadInBackground()
        key = byKid.get(header.kid)
      }
      if (!key || !isPublished(key.stored, now)) throw new Error('invalid JWT: unknown kid')
      if (key.stored.alg !== alg) throw new Error('invalid JWT: alg does not match the key')
      if (!verifySignature(alg, key.publicKey, signingInput, signature)) throw new Error('invalid JWT: bad signature')
      return { payload, protectedHeader: header }
    },

    async jwks() {
      const now = clock.now()
      maybeRefresh(now)
      return { keys: keys.filter((k) => isPublished(k.stored, now)).map((k) => k.jwk) }
    },

    algorithms() {
      const now = clock.now()
      return SIGNING_ALGS.filter((alg) => currentOf(keys, alg, now) !== undefined)
    },

    async list() {
      const now = clock.now()
      const all = await store.list()
      return all.map((k) => info(k, all, now))
    },

    async rotate(alg) {
      await reload() // the same check before writing: never add a plaintext key beside encrypted ones
      const now = clock.now()
      const activateAt = now + config.keyActivationDelay * 1000
      const created = await store.locked(async (w) => {
        const algs = alg ? [alg] : [...new Set([...required, ...(await w.unretiredAlgs())])]
        // The old key may have signed, until the new one activates, tokens living this long.
        const longest = await longestTokenLifetime(w)
        const out: StoredSigningKey[] = []
        for (const a of algs) {
          const key = await generateSigningKey(a, { createdAt: now, activateAt }, encryptionKey)
          await w.insert(key)
          await w.retireOthers(a, key.kid, activateAt + longest * 1000)
          out.push(key)
        }
        return out
      })
      await reload()
      for (const k of created) deps.audit?.emit({ event: 'key.rotated', kid: k.kid, alg: k.alg, reason: 'rotation' })
      const all = await store.list()
      return created.map((k) => info(k, all, now))
    },

    async refresh() {
      await reload()
    },

    close() {
      if (timer) clearInterval(timer)
      timer = undefined
    },
  }
}
