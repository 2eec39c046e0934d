// Client authentication by assertion: RFC 7523 §2.2 and §3, OpenID Connect Core §9
// (private_key_jwt, client_secret_jwt). Every check is done here once, for every endpoint where a
// client authenticates. The caller answers any failure with one fixed invalid_client sentence
// (RFC 7521 §4.2.1); the reason goes only to the throttle's log.
//
// Checks, in order: the header's alg is one the client's method allows (asymmetric for
// private_key_jwt, HMAC for client_secret_jwt, never `none`); the signature, with the client's
// public key (src/client-auth/client-keys.ts) or with one of its unexpired secrets; iss = sub =
// the client id; aud the issuer or the endpoint's URL (either, as RFC 7523 §3 allows; at the
// pushed authorization request endpoint also the token endpoint's, RFC 9126 §2), but for a fapi2
// client the issuer alone, as a string (FAPI 2.0 Security Profile §5.3.2.1, against audience
// injection);
// exp in the future but at most MAX_LIFETIME_SECONDS ahead; nbf and iat not in the future; all
// with CLOCK_SKEW_SECONDS and the injected clock. Last, the jti is recorded, once per client until
// the assertion expires, in the database all replicas share (RFC 7523 §3 item 7).
import { decodeProtectedHeader, jwtVerify, type JWSHeaderParameters, type JWTPayload } from 'jose'
import type { Clock } from '../domain/clock.js'
import { signingAlgsFor } from '../domain/client-profile.js'
import type { Client } from '../domain/types.js'
import { clientSecretAad, decryptAtRest, deriveKeyEncryptionKey } from '../keys/key-crypto.js'
import type { UsedJtiStore } from '../stores/used-jtis.js'
import type { ClientKeyResolver } from './client-keys.js'

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
/** private_key_jwt: asymmetric algorithms only. */
export const ASYMMETRIC_ASSERTION_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]
/** client_secret_jwt: HMAC keyed with the client secret (RFC 7518 §3.2). */
export const HMAC_ASSERTION_ALGS = ['HS256', 'HS384', 'HS512']
/** Discovery's *_endpoint_auth_signing_alg_values_supported (RFC 8414 §2). */
export const ASSERTION_ALGS = [...ASYMMETRIC_ASSERTION_ALGS, ...HMAC_ASSERTION_ALGS]
/** How far ahead an assertion's exp may be: a short-lived, single-use credential. */
export const MAX_LIFETIME_SECONDS = 600
export const CLOCK_SKEW_SECONDS = 30
const MAX_JTI_LENGTH = 200

export type AssertionMethod = 'private_key_jwt' | 'client_secret_jwt'

/** Why an assertion was refused: for the log and the throttle, never for the client. */
export class AssertionRefused extends Error {
  override readonly name = 'AssertionRefused'
}

export interface AssertionVerifierDeps {
  clock: Clock
  issuer: string
  keys: ClientKeyResolver
  usedJtis: Pick<UsedJtiStore, 'use'>
  /** KEY_ENCRYPTION_SECRET: opens the sealed secrets of client_secret_jwt clients. */
  keyEncryptionSecret: string | undefined
}

export interface AssertionVerifier {
  /**
   * Resolves when `jwt` authenticates `client` by `method` at an endpoint whose aud may be the
   * issuer or one of `endpointUrls`; throws AssertionRefused.
   */
  verify(client: Client, method: AssertionMethod, jwt: string, endpointUrls: readonly string[]): Promise<void>
}

export function createAssertionVerifier(deps: AssertionVerifierDeps): AssertionVerifier {
  const kek = deps.keyEncryptionSecret === undefined ? undefined : deriveKeyEncryptionKey(deps.keyEncryptionSecret)

  /** The plain secrets of the client that are unexpired and kept for HMAC. */
  function hmacKeys(client: Client, now: number): Uint8Array[] {
    const keys: Uint8Array[] = []
    for (const s of client.secrets) {
      if (!s.sealed || (s.expiresAt !== undefined && s.expiresAt <= now)) continue
      if (!s.sealed.encrypted) keys.push(Buffer.from(s.sealed.value, 'utf8'))
      else if (kek) {
        try {
          keys.push(Buffer.from(decryptAtRest(s.sealed.value, kek, clientSecretAad(client.clientId, s.valueHash), 'client secret'), 'utf8'))
        } catch {
          // Sealed under another KEY_ENCRYPTION_SECRET: this secret cannot authenticate.
        }
      }
    }
    return keys
  }

  async function verifySignature(
    client: Client,
    method: AssertionMethod,
    jwt: string,
    endpointUrls: readonly string[],
  ): Promise<JWTPayload> {
    let alg: string | undefined
    try {
      alg = decodeProtectedHeader(jwt).alg
    } catch {
      throw new AssertionRefused('malformed')
    }
    // A profile narrows them (FAPI 2.0 §5.4.1: a fapi2 client signs with ES256 or PS256 only).
    const allowed = signingAlgsFor(client, method === 'private_key_jwt' ? ASYMMETRIC_ASSERTION_ALGS : HMAC_ASSERTION_ALGS)
    if (alg === undefined || !allowed.includes(alg)) throw new AssertionRefused('algorithm not allowed')
    const now = deps.clock.now()
    const fapi2 = client.profile === 'fapi2'
    const options = {
      algorithms: allowed,
      issuer: client.clientId,
      subject: client.clientId,
      audience: fapi2 ? deps.issuer : [deps.issuer, ...endpointUrls],
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'jti'],
      currentDate: new Date(now),
      clockTolerance: CLOCK_SKEW_SECONDS,
    }
    if (method === 'private_key_jwt') {
      if (!deps.keys.hasKeys(client)) throw new AssertionRefused('no registered keys')
      try {
        return (await jwtVerify(jwt, (header: JWSHeaderParameters) => deps.keys.resolve(client, header), options)).payload
      } catch (err) {
        throw new AssertionRefused(err instanceof Error ? err.name : 'not verifiable')
      }
    }
    for (const key of hmacKeys(client, now)) {
      try {
        return (await jwtVerify(jwt, key, options)).payload
      } catch (err) {
        if ((err as Error).name !== 'JWSSignatureVerificationFailed') throw new AssertionRefused((err as Error).name)
      }
    }
    throw new AssertionRefused('signature')
  }

  return {
    async verify(client, method, jwt, endpointUrls) {
      const payload = await verifySignature(client, method, jwt, endpointUrls)
      // jose accepts an array that names the issuer; a fapi2 client's aud is the string itself.
      if (client.profile === 'fapi2' && typeof payload.aud !== 'string') throw new AssertionRefused('aud not the issuer string')
      const now = Math.floor(deps.clock.now() / 1000)
      const exp = payload.exp!
      if (exp > now + MAX_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) throw new AssertionRefused('exp too far ahead')
      if (typeof payload.iat === 'number' && payload.iat > now + CLOCK_SKEW_SECONDS) throw new AssertionRefused('iat in the future')
      const jti = payload.jti
      if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw new AssertionRefused('jti')
      if (!(await deps.usedJtis.use(client.clientId, jti, (exp + CLOCK_SKEW_SECONDS) * 1000, deps.clock.now()))) {
        throw new AssertionRefused('jti replayed')
      }
    },
  }
}
