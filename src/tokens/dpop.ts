// DPoP proofs (RFC 9449): the one checker every endpoint uses (the token endpoint §5, userinfo
// §7), the server nonces (§8) and the key thumbprint an authorization request may name (§10).
// A proof is checked in the order of §4.3: one header, a JWS of typ dpop+jwt, an allowed
// asymmetric alg, a public jwk that verifies the signature, htm and htu of this request, iat
// within IAT_WINDOW_SECONDS of the clock, a nonce of ours when nonces are required, ath at a
// resource, and its jti not seen before for the key (used_jtis, shared by every replica).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose'
import type { Clock } from '../domain/clock.js'
import { OAuthError } from '../errors.js'
import type { UsedJtiStore } from '../stores/used-jtis.js'

/** §4.2: asymmetric algorithms only (never none, never HMAC), as dpop_signing_alg_values_supported. */
export const DPOP_ALGS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519']

/** A proof's iat may be this far before or after the server's clock (§11.1 leaves the window to the server). */
export const IAT_WINDOW_SECONDS = 60
/** A server nonce is issued for this long and accepted for one more such period. */
export const NONCE_PERIOD_SECONDS = 300

const MAX_PROOF_LENGTH = 8192
const MAX_JTI_LENGTH = 256
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
/** RFC 7638 thumbprint with SHA-256: 43 base64url characters. */
const JKT = /^[A-Za-z0-9_-]{43}$/
/** JWK members that only a private (or symmetric) key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/** What a valid proof establishes. */
export interface DPoPProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key: what tokens are bound to (cnf.jkt, §6.1). */
  jkt: string
}

export interface DPoPCheck {
  /** The DPoP header(s) as received (undefined: none). */
  header: string | string[] | undefined
  /** The request's method (htm). */
  method: string
  /** The URL the request was meant for, as the issuer publishes it (htu, compared without query or fragment). */
  url: string
  /** At a resource: the access token the proof must name (ath, §4.3 item 11). */
  accessToken?: string
  /** The algorithms the client may use, when narrower than DPOP_ALGS (src/domain/client-profile.ts). */
  algorithms?: readonly string[]
}

export interface DPoPVerifier {
  /** The proof of a request, checked fully; undefined when the request carries none. Throws invalid_dpop_proof or use_dpop_nonce. */
  verify(check: DPoPCheck): Promise<DPoPProof | undefined>
  /** The nonce to send in DPoP-Nonce (§8.2); undefined when nonces are not required. */
  currentNonce(): string | undefined
}

export interface DPoPVerifierDeps {
  clock: Clock
  usedJtis: Pick<UsedJtiStore, 'use'>
  /** A server secret shared by every replica: nonces are MACs of the time period, so any replica checks any. */
  nonceKey: Buffer
  /** DPOP_NONCE_REQUIRED: every proof must carry a nonce of ours. */
  requireNonce: boolean
}

/** base64url(SHA-256(access token)): a proof's ath (§4.2). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url')
}

/** htu as compared (§4.3 item 9): scheme, host and path, normalized; undefined when it is not an http(s) URL. */
export function normalizeHtu(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
  return `${url.protocol}//${url.host}${url.pathname}`
}

const refuse = (description: string, headers: Record<string, string> = {}) => new OAuthError('invalid_dpop_proof', description, { headers })

export function createDPoPVerifier(deps: DPoPVerifierDeps): DPoPVerifier {
  const { clock, nonceKey } = deps

  function nonceOf(period: number): string {
    const p = Buffer.alloc(6)
    p.writeUIntBE(period, 0, 6)
    const mac = createHmac('sha256', nonceKey).update('dpop-nonce.').update(p).digest().subarray(0, 16)
    return Buffer.concat([p, mac]).toString('base64url')
  }
  const period = () => Math.floor(clock.now() / 1000 / NONCE_PERIOD_SECONDS)
  const currentNonce = () => nonceOf(period())

  function nonceIsValid(nonce: unknown): boolean {
    if (typeof nonce !== 'string' || nonce.length !== 30) return false
    const raw = Buffer.from(nonce, 'base64url')
    if (raw.length !== 22) return false
    const p = raw.readUIntBE(0, 6)
    const now = period()
    if (p !== now && p !== now - 1) return false
    const expected = Buffer.from(nonceOf(p), 'base64url')
    return timingSafeEqual(raw, expected)
  }

  /** The header's single compact JWS (§4.3 items 1 and 2). */
  function single(header: string | string[]): string {
    if (Array.isArray(header) || header.includes(',')) throw refuse('send exactly one DPoP header')
    const proof = header.trim()
    if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) throw refuse('the DPoP proof is not a JWT')
    return proof
  }

  /** Signature, typ, alg and jwk (§4.3 items 3 to 7); returns the claims and the key's thumbprint. */
  async function signed(proof: string, algorithms: readonly string[]): Promise<{ claims: Record<string, unknown>; jkt: string }> {
    let header: ReturnType<typeof decodeProtectedHeader>
    try {
      header = decodeProtectedHeader(proof)
    } catch {
      throw refuse('the DPoP proof is not a JWT')
    }
    if (header.typ !== 'dpop+jwt') throw refuse('the DPoP proof must have typ dpop+jwt')
    if (typeof header.alg !== 'string' || !algorithms.includes(header.alg))
      throw refuse('the DPoP proof is signed with an algorithm that is not allowed')
    const jwk = header.jwk
    if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw refuse('the DPoP proof must carry its public key as jwk')
    if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) throw refuse('the DPoP proof jwk must be a public key')
    try {
      const { payload } = await jwtVerify(proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: [...algorithms],
        currentDate: new Date(clock.now()),
      })
      return { claims: payload, jkt: await calculateJwkThumbprint(jwk, 'sha256') }
    } catch {
      throw refuse('the DPoP proof signature is not valid')
    }
  }

  return {
    currentNonce: () => (deps.requireNonce ? currentNonce() : undefined),

    async verify(check) {
      if (check.header === undefined) return undefined
      const proof = single(check.header)
      const { claims, jkt } = await signed(proof, check.algorithms ?? DPOP_ALGS)
      const { jti, htm, htu, iat } = claims
      if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw refuse('the DPoP proof must carry a jti')
      if (htm !== check.method) throw refuse('the DPoP proof htm does not match the request method')
      const expected = normalizeHtu(check.url)
      if (typeof htu !== 'string' || expected === undefined || normalizeHtu(htu) !== expected) {
        throw refuse('the DPoP proof htu does not match the request URL')
      }
      const now = Math.floor(clock.now() / 1000)
      if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(iat - now) > IAT_WINDOW_SECONDS) {
        throw refuse('the DPoP proof iat is outside the accepted window')
      }
      // §8: a missing or stale nonce is answered with a fresh one, for the client to retry with.
      if (deps.requireNonce && !nonceIsValid(claims.nonce)) {
        throw new OAuthError('use_dpop_nonce', 'the DPoP proof must carry the nonce of the DPoP-Nonce header', {
          headers: { 'dpop-nonce': currentNonce() },
        })
      }
      if (check.accessToken !== undefined) {
        const ath = claims.ath
        const want = Buffer.from(accessTokenHash(check.accessToken))
        if (typeof ath !== 'string' || ath.length !== want.length || !timingSafeEqual(Buffer.from(ath), want)) {
          throw refuse('the DPoP proof ath does not match the access token')
        }
      }
      // §11.1: each proof once. The jti is kept (hashed: any length, any characters) for as long as its iat is accepted.
      const jtiHash = createHash('sha256').update(jti).digest('base64url')
      const until = (Math.floor(iat) + IAT_WINDOW_SECONDS + 1) * 1000
      if (!(await deps.usedJtis.use(`dpop:${jkt}`, jtiHash, until, clock.now()))) throw refuse('the DPoP proof was used before')
      return { jkt }
    },
  }
}

/**
 * §10: the dpop_jkt of an authorization request (or of a pushed one: the same parameters), when
 * it names one; a value that cannot be a SHA-256 thumbprint is invalid_request.
 */
export function readDPoPJkt(params: { get(name: string): string | undefined }): string | undefined {
  const jkt = params.get('dpop_jkt')
  if (jkt === undefined) return undefined
  if (!JKT.test(jkt)) throw new OAuthError('invalid_request', 'dpop_jkt is not a SHA-256 JWK thumbprint')
  return jkt
}

/**
 * A grant bound to a key (a code whose request named dpop_jkt, §10; a public client's refresh
 * token, §5) is redeemed only with a proof of that key: none is invalid_dpop_proof, another key's
 * invalid_grant. Checked before anything is consumed, so a thief without the key changes nothing.
 */
export function checkBoundKey(boundJkt: string | undefined, proof: DPoPProof | undefined, what: string): void {
  if (boundJkt === undefined) return
  if (proof === undefined) throw refuse(`a DPoP proof is required: the ${what} is bound to a key`)
  const a = Buffer.from(proof.jkt)
  const b = Buffer.from(boundJkt)
  if (a.length !== b.length || !timingSafeEqual(a, b))
    throw new OAuthError('invalid_grant', `the DPoP proof is not of the key the ${what} is bound to`)
}

/** RFC 9449 §7.1: the challenge of a resource, with the error when there is one. */
export function dpopChallenge(
  error?: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce' | 'insufficient_scope',
  description?: string,
): string {
  const parts = [`algs="${DPOP_ALGS.join(' ')}"`]
  if (error !== undefined) parts.unshift(`error="${error}"`)
  if (description !== undefined) parts.splice(1, 0, `error_description="${description.replace(/["\\]/g, '')}"`)
  return `DPoP ${parts.join(', ')}`
}
