// CONTRACT — the key-management work implements createSigningKeyService in src/tokens/key-service.ts.
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
}

export interface SigningKeyService {
  /** Creates the initial RS256 and ES256 keys when none exist; safe when replicas start together. */
  ensureKeys(): Promise<void>
  /**
   * Signs a JWT with the current key for `alg`. The header gets alg, kid and typ.
   * Hot path (every access token): no database round trip; keys are cached in memory.
   */
  sign(payload: JWTPayload, opts: { alg: SigningAlg; typ: string }): Promise<string>
  /**
   * Verifies a JWT signed by one of our published keys (any alg we have keys for), checks the
   * `typ` header when given; does NOT check times or claims (callers decide on exp with the Clock).
   * Throws on a bad signature, unknown kid, or malformed token.
   */
  verify(jwt: string, opts?: { typ?: string }): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }>
  /** The public JWKS (pending, current and not-yet-removed retired keys). */
  jwks(): Promise<{ keys: JWK[] }>
  /** Algorithms we hold keys for (discovery: *_signing_alg_values_supported). */
  algorithms(): SigningAlg[]
  list(): Promise<KeyInfo[]>
  /** Adds a new key per algorithm (or just `alg`), published now, signing after KEY_ACTIVATION_DELAY. */
  rotate(alg?: SigningAlg): Promise<KeyInfo[]>
  /** Reloads the in-memory keys from the database now (otherwise every ~60 s in the background). */
  refresh(): Promise<void>
  /** Stops the background refresh (app close). */
  close(): void
}
