// Applies a seed file (docs/seed-file.md) in one transaction: validate everything first, then
// an idempotent upsert keyed by clientId / name / username. An invalid file changes nothing.
import { readFile } from 'node:fs/promises'
import type { Db, Queryable } from '../db/db.js'
import type { IdentityProvider, Secret } from '../domain/types.js'
import { clientSecretAad, decryptAtRest, deriveKeyEncryptionKey, encryptAtRest, identityProviderSecretAad } from '../keys/key-crypto.js'
import { createPgSeedWriter, type ExistingUser, type PgSeedWriter } from '../stores/seed.postgres.js'
import { secretHash } from '../tokens/handles.js'
import { hashPassword, verifyPassword } from '../interaction/passwords.js'
import { checkDuplicates, checkReferences, seedKeys, seedWarnings } from './check.js'
import { jsonPath, SeedError } from './errors.js'
import { SeedFile, STANDARD_IDENTITY_RESOURCES, type SeedInput } from './schema.js'

export { SeedError } from './errors.js'
export { seedWarnings } from './check.js'

export interface SeedSummary {
  clients: number
  apiScopes: number
  apiResources: number
  identityResources: number
  users: number
  identityProviders: number
}

/** How secrets are kept at rest: encrypted with KEY_ENCRYPTION_SECRET when it is set. */
export interface SeedAtRest {
  keyEncryptionSecret: string | undefined
  /**
   * An identity provider without clientSecret keeps the stored one (the admin API's PUT of one
   * provider, whose answers never carry the secret), instead of becoming a public client.
   */
  keepOmittedClientSecrets?: boolean
}

export async function applySeedFile(db: Db, path: string, atRest?: SeedAtRest): Promise<SeedSummary> {
  return applySeed(db, await readSeedFile(path), `invalid seed file ${path}`, atRest)
}

/** Checks `input` whole, then applies it in one transaction; throws SeedError listing every problem. */
export async function applySeed(db: Db, input: unknown, heading = 'invalid seed file', atRest?: SeedAtRest): Promise<SeedSummary> {
  return writeSeed(db, input, heading, checkSeed(input), atRest)
}

/** The warnings of a valid file (seedWarnings), with the identity providers already stored. */
export async function seedWarningsFor(db: Queryable, seed: SeedInput): Promise<string[]> {
  const stored = await createPgSeedWriter(db).findIdentityProviders()
  return seedWarnings(
    seed,
    stored.map((p) => p.scheme),
  )
}

/** The file's JSON; a SeedError naming the file when it cannot be read or parsed. */
export async function readSeedFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new SeedError([], `cannot read seed file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new SeedError([], `seed file ${path} is not valid JSON: ${(err as Error).message}`)
  }
}

export interface CheckedSeed {
  /** The parsed file; undefined when the schema refused it. */
  seed: SeedInput | undefined
  /** Every problem found without the database: the schema's, then duplicate keys. */
  problems: string[]
}

/** Everything that can be checked without the database, all of it: the schema and duplicate keys. */
export function checkSeed(input: unknown): CheckedSeed {
  const parsed = SeedFile.safeParse(input)
  return {
    seed: parsed.data,
    problems: [...(parsed.error?.issues.map((i) => `${jsonPath(i.path)}: ${i.message}`) ?? []), ...checkDuplicates(seedKeys(input))],
  }
}

/** The parsed file; a SeedError listing every problem checkSeed finds. */
export function validateSeed(input: unknown, heading = 'invalid seed file'): SeedInput {
  const { seed, problems } = checkSeed(input)
  if (!seed || problems.length > 0) throw new SeedError(problems, heading)
  return seed
}

/**
 * Checks `input` against the stored rows too, then upserts, all in one transaction. A SeedError
 * lists the problems of the file (`checked`, when the caller has them already) with those against
 * what is stored, so that one run reports them all.
 */
export async function writeSeed(
  db: Db,
  input: unknown,
  heading = 'invalid seed file',
  checked = checkSeed(input),
  atRest: SeedAtRest = { keyEncryptionSecret: undefined },
): Promise<SeedSummary> {
  return db.transaction((tx) => writeSeedIn(tx, input, heading, checked, atRest))
}

/** writeSeed inside the caller's transaction (the admin API's, which checks its preconditions first). */
export async function writeSeedIn(
  tx: Queryable,
  input: unknown,
  heading = 'invalid seed file',
  checked = checkSeed(input),
  atRest: SeedAtRest = { keyEncryptionSecret: undefined },
): Promise<SeedSummary> {
  const keys = seedKeys(input)
  const w = createPgSeedWriter(tx)
  const users = await w.findUsers(
    keys.users.flatMap((u) => (u.username === undefined ? [] : [u.username])),
    keys.users.flatMap((u) => (u.subjectId === undefined ? [] : [u.subjectId])),
  )
  const stored = checkReferences(keys, { apiScopes: await w.apiScopeNames(), identityResources: await w.identityResourceNames(), users })
  const problems = [...checked.problems, ...stored]
  if (!checked.seed || problems.length > 0) throw new SeedError(problems, heading)
  const seed = checked.seed
  await write(w, seed, users, atRest)
  await writeIdentityProviders(w, seed, atRest)
  return {
    clients: seed.clients.length,
    apiScopes: seed.apiScopes.length,
    apiResources: seed.apiResources.length,
    identityResources: seed.identityResources.length,
    users: seed.users.length,
    identityProviders: seed.identityProviders.length,
  }
}

/**
 * Upserts the providers; a client secret is encrypted with KEY_ENCRYPTION_SECRET when it is set
 * (additional data `identity-provider:<scheme>`). GCM ciphertexts differ at every encryption, so
 * a stored secret that still decrypts to the file's is kept, and applying the file again writes nothing.
 */
async function writeIdentityProviders(w: PgSeedWriter, seed: SeedInput, atRest: SeedAtRest) {
  const stored = new Map((await w.findIdentityProviders()).map((p) => [p.scheme, p.clientSecret]))
  const key = atRest.keyEncryptionSecret === undefined ? undefined : deriveKeyEncryptionKey(atRest.keyEncryptionSecret)
  for (const p of seed.identityProviders) {
    const aad = identityProviderSecretAad(p.scheme)
    const kept = stored.get(p.scheme)
    let clientSecret: IdentityProvider['clientSecret']
    if (p.clientSecret === undefined) clientSecret = atRest.keepOmittedClientSecrets ? kept : undefined
    else if (!key) clientSecret = { value: p.clientSecret, encrypted: false }
    else if (kept?.encrypted && decryptsTo(kept.value, key, aad, p.clientSecret)) clientSecret = kept
    else clientSecret = { value: encryptAtRest(p.clientSecret, key, aad), encrypted: true }
    await w.upsertIdentityProvider({ ...p, clientSecret })
  }
}

function decryptsTo(stored: string, key: Buffer, aad: string, plain: string): boolean {
  try {
    return decryptAtRest(stored, key, aad, 'identity provider secret') === plain
  } catch {
    return false
  }
}

async function write(w: PgSeedWriter, seed: SeedInput, existingUsers: ExistingUser[], atRest: SeedAtRest) {
  for (const s of seed.apiScopes) await w.upsertApiScope(s)
  for (const r of seed.apiResources) await w.upsertApiResource({ ...r, secrets: r.secrets && toSecrets(r.secrets) })
  for (const r of seed.identityResources) {
    const o = typeof r === 'string' ? { name: r, displayName: undefined, description: undefined, claims: undefined, enabled: true } : r
    await w.upsertIdentityResource({ ...o, claims: o.claims ?? [...(STANDARD_IDENTITY_RESOURCES[o.name] ?? [])] })
  }
  for (const c of seed.clients) {
    const sealFor = c.tokenEndpointAuthMethod === 'client_secret_jwt' ? sealer(c.clientId, atRest) : undefined
    await w.upsertClient({ ...c, secrets: c.secrets && toSecrets(c.secrets, sealFor) })
  }
  for (const u of seed.users) {
    const stored = existingUsers.find((e) => e.username === u.username)
    await w.upsertUser({
      subjectId: u.subjectId,
      username: u.username,
      enabled: u.enabled,
      claims: u.claims,
      passwordHash: await keepOrHash(u.password, stored?.passwordHash),
      cibaUserCodeHash: await keepOrHash(u.cibaUserCode, stored?.cibaUserCodeHash),
      requireMfa: u.requireMfa,
    })
  }
}

/**
 * scrypt hashes are salted: rehashing an unchanged password would rewrite the row on every apply.
 * Keep the stored hash while it still verifies; an omitted password keeps the stored one.
 */
async function keepOrHash(plain: string | undefined, stored: string | undefined): Promise<string | undefined> {
  if (plain === undefined) return stored
  if (stored !== undefined && (await verifyPassword(plain, stored))) return stored
  return hashPassword(plain)
}

/**
 * client_secret_jwt (RFC 7523 §2.2) verifies an HMAC keyed with the secret itself, which its hash
 * cannot replace: for a client of that method the secret is kept beside its hash, encrypted with
 * KEY_ENCRYPTION_SECRET when set (bound to the client and the hash), as identity providers'
 * secrets are. Clients of every other method keep the hash alone.
 */
function sealer(clientId: string, atRest: SeedAtRest) {
  const key = atRest.keyEncryptionSecret === undefined ? undefined : deriveKeyEncryptionKey(atRest.keyEncryptionSecret)
  return (value: string, valueHash: string): NonNullable<Secret['sealed']> =>
    key ? { value: encryptAtRest(value, key, clientSecretAad(clientId, valueHash)), encrypted: true } : { value, encrypted: false }
}

function toSecrets(
  secrets: NonNullable<SeedInput['clients'][number]['secrets']>,
  seal?: (value: string, valueHash: string) => NonNullable<Secret['sealed']>,
): Secret[] {
  // Keyed by hash: the same secret listed twice is stored once (the last entry wins).
  const byHash = new Map<string, Secret>()
  for (const s of secrets) {
    const valueHash = s.sha256 ?? secretHash(s.value ?? '')
    byHash.set(valueHash, {
      valueHash,
      expiresAt: s.expiration === undefined ? undefined : Date.parse(s.expiration),
      description: s.description,
      ...(seal && s.value !== undefined ? { sealed: seal(s.value, valueHash) } : {}),
    })
  }
  return [...byHash.values()]
}
