// CONTRACT — the key-management work implements createSigningKeyService in src/keys/key-service.ts.
// Everything that signs or verifies our own JWTs goes through this interface.
import type { JWK, JWTPayload, ProtectedHeaderParameters } from 'jose'
import type { SigningAlg } from '../config.js'

export interface KeyInfo {
  kid: string
  alg: SigningAlg
  createdAt: number
  activateAt: number
  retireAt: number | undefined
  /** 'pending' (published, not signing yet), 'current' (signs), 'retired' (published, verifies only). */
  status: 'pending' | 'current' | 'retired'
  encrypted: boolean
  /** How the private part is stored; 'erased' once a newer key of the alg signs (the key only verifies). */
  privateKey: 'plaintext' | 'encrypted' | 'erased'
}

/** A key found stored in plaintext while KEY_ENCRYPTION_SECRET is set, and the new key replacing it. */
export interface KeyReplacement {
  kid: string
  alg: SigningAlg
  /** The new key, stored encrypted: published now, signing from signsUntil. */
  replacedBy: string
  /** When the old key stops signing (ms); its private part is erased then, its public part stays published until its tokens expire. */
  signsUntil: number
}

/** What ensureKeys() changed besides creating the first keys, for the start-up log. */
export interface KeyMaintenance {
  /** Keys stored in plaintext, replaced by new encrypted keys because KEY_ENCRYPTION_SECRET is set. */
  replaced: KeyReplacement[]
  /** Keys whose private part was erased: superseded, they only verify until retired. */
  erased: string[]
  /** Retired keys deleted: nothing they signed can still be valid. */
  removed: string[]
  /**
   * After plaintext private parts were replaced or erased: whether their old row versions are gone
   * from the database's files (false: a transaction older than the replacement was still open).
   */
  purged?: boolean
}

export interface SigningKeyService {
  /**
   * Creates the RS256, ES256 (and ACCESS_TOKEN_SIGNING_ALG) keys that do not exist yet, under an
   * advisory lock so replicas starting together create each once, then loads every published key.
   * With KEY_ENCRYPTION_SECRET set, keys found stored in plaintext are replaced (see KeyMaintenance).
   * Rejects with a message naming the kid (never the secret) when a key is stored encrypted and
   * KEY_ENCRYPTION_SECRET is missing or wrong: start-up must fail.
   */
  ensureKeys(): Promise<KeyMaintenance>
  /**
   * Signs a JWT with the current key for `alg`. The header gets alg, kid and typ.
   * Hot path (every access token): no database round trip; keys are cached in memory.
   * Throws a plain Error when we hold no key for `alg` (see algorithms()).
   */
  sign(payload: JWTPayload, opts: { alg: SigningAlg; typ: string }): Promise<string>
  /**
   * Verifies a JWT signed by one of our published keys (any alg we have keys for), checks the
   * `typ` header when given; does NOT check times or claims (callers decide on exp with the Clock).
   * Throws a plain Error (never anything else) on a bad signature, unknown or unpublished kid,
   * header alg other than the key's, `none`, `crit`, or a malformed token. typ is compared
   * case-insensitively, "application/" optional (RFC 8725 §3.11): pass 'JWT' for ID tokens,
   * 'at+jwt' for access tokens, so one kind is never accepted as the other.
   */
  verify(jwt: string, opts?: { typ?: string }): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }>
  /** The public JWKS (pending, current and not-yet-removed retired keys). */
  jwks(): Promise<{ keys: JWK[] }>
  /** Algorithms we can sign with now, i.e. hold a current key for (discovery: *_signing_alg_values_supported). */
  algorithms(): SigningAlg[]
  list(): Promise<KeyInfo[]>
  /** Adds a new key per algorithm (or just `alg`), published now, signing after KEY_ACTIVATION_DELAY. */
  rotate(alg?: SigningAlg): Promise<KeyInfo[]>
  /** Reloads the in-memory keys from the database now (otherwise every ~60 s in the background). */
  refresh(): Promise<void>
  /** Stops the background refresh (app close). */
  close(): void
}
