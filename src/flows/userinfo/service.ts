// The UserInfo endpoint's logic (OpenID Connect Core §5.3): the claims of the user an access token
// was issued for, as far as the token's identity scopes release them (§5.4), `sub` always. Errors
// as RFC 6750 §3 says: a missing, expired, revoked, forged or foreign token is 401 invalid_token;
// a token without `openid` is 403 insufficient_scope. JWT and reference access tokens alike
// (the token reader checks signature or stored row, expiry, revocation, and that the token's client
// and user are still enabled; the user is then read afresh for the claims, and checked again).
// RFC 9449 §7: a DPoP-bound token (cnf.jkt) is accepted only with the DPoP scheme and a proof of
// its key naming it (ath); as a Bearer token it is refused, and so is an unbound one sent as DPoP.
import type { Config } from '../../config.js'
import { OAuthError } from '../../errors.js'
import type { ResourceStore } from '../../stores/resources.js'
import type { UserStore } from '../../stores/users.js'
import type { TokenReader } from '../../tokens/token-reader.js'
import { dpopChallenge, type DPoPProof, type DPoPVerifier } from '../../tokens/dpop.js'

export interface UserinfoDeps {
  config: Pick<Config, 'issuer'>
  reader: TokenReader
  users: Pick<UserStore, 'findBySubjectId'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  dpop: DPoPVerifier
  /** This endpoint's URL as the issuer publishes it: what a proof's htu must name. */
  url: string
}

/** The access token as the request presented it: its scheme, and for DPoP the proof header and method. */
export type Presented =
  { token: string; scheme: 'Bearer' } | { token: string; scheme: 'DPoP'; proof: string | string[] | undefined; method: string }

type ResourceError = 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof' | 'use_dpop_nonce'

/** §7.1: a refusal of a DPoP-scheme request, or of a bound token, with the DPoP challenge. */
function dpopRefusal(error: ResourceError, description: string, headers: Record<string, string> = {}): OAuthError {
  return new OAuthError(error, description, {
    status: error === 'insufficient_scope' ? 403 : 401,
    headers: { ...headers, 'www-authenticate': dpopChallenge(error) },
  })
}

/** RFC 6750 §3: the challenge, with an error code when there is one. */
export function bearerChallenge(realm: string, error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope', extra = ''): string {
  const r = `Bearer realm="${realm.replace(/["\\]/g, '')}"`
  return error ? `${r}, error="${error}"${extra}` : r
}

export interface UserinfoService {
  /** The client the token was issued to (CORS: whose allowedCorsOrigins apply), if it is a live token of ours. */
  clientOf(token: string | undefined): Promise<string | undefined>
  /** The token as presented (undefined: none was). */
  claims(presented: Presented | undefined): Promise<Record<string, unknown>>
  /** The DPoP nonce for the client's next proof (§8.2); undefined when nonces are not required. */
  dpopNonce(): string | undefined
}

export function createUserinfoService(deps: UserinfoDeps): UserinfoService {
  const realm = deps.config.issuer
  const invalidToken = () =>
    new OAuthError('invalid_token', 'the access token is not valid', {
      headers: { 'www-authenticate': bearerChallenge(realm, 'invalid_token') },
    })

  /** §7.1: the DPoP scheme needs a valid proof that names the token (ath). */
  async function proofOf(p: Extract<Presented, { scheme: 'DPoP' }>): Promise<DPoPProof> {
    let proof: DPoPProof | undefined
    try {
      proof = await deps.dpop.verify({ header: p.proof, method: p.method, url: deps.url, accessToken: p.token })
    } catch (err) {
      if (err instanceof OAuthError && (err.code === 'invalid_dpop_proof' || err.code === 'use_dpop_nonce')) {
        throw dpopRefusal(err.code, err.description ?? err.code, { ...err.headers })
      }
      throw err
    }
    if (proof === undefined) throw dpopRefusal('invalid_dpop_proof', 'a DPoP proof is required with the DPoP scheme')
    return proof
  }

  /** A bound token only with a proof of its key; an unbound one never with the DPoP scheme. */
  function checkBinding(cnf: unknown, proof: DPoPProof | undefined): void {
    const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined
    if (typeof jkt === 'string') {
      if (proof === undefined)
        throw dpopRefusal('invalid_token', 'the access token is bound to a DPoP key: present it with the DPoP scheme')
      if (proof.jkt !== jkt) throw dpopRefusal('invalid_dpop_proof', 'the DPoP proof is not of the key the access token is bound to')
    } else if (proof !== undefined) {
      throw dpopRefusal('invalid_token', 'the access token is not DPoP-bound: present it as a Bearer token')
    }
  }

  return {
    /** The client the token was issued to (CORS: whose allowedCorsOrigins apply), if it is a live token of ours. */
    async clientOf(token: string | undefined): Promise<string | undefined> {
      const read = token === undefined ? undefined : await deps.reader.read(token)
      return read?.kind === 'access_token' && typeof read.claims.client_id === 'string' ? read.claims.client_id : undefined
    },

    dpopNonce: () => deps.dpop.currentNonce(),

    /** The token as presented (undefined: none was). */
    async claims(presented: Presented | undefined): Promise<Record<string, unknown>> {
      // §3.1: a request without any authentication information gets the challenge without an error code.
      if (presented === undefined) {
        throw new OAuthError('invalid_token', 'an access token is required', { headers: { 'www-authenticate': bearerChallenge(realm) } })
      }
      const { token, scheme } = presented
      const proof = scheme === 'DPoP' ? await proofOf(presented) : undefined
      const refuse = scheme === 'DPoP' ? () => dpopRefusal('invalid_token', 'the access token is not valid') : invalidToken
      const read = await deps.reader.read(token)
      if (!read || read.kind !== 'access_token' || typeof read.claims.sub !== 'string') throw refuse()
      checkBinding(read.claims.cnf, proof)
      const scopes = typeof read.claims.scope === 'string' ? read.claims.scope.split(' ') : []
      if (!scopes.includes('openid')) {
        if (proof) throw dpopRefusal('insufficient_scope', 'the access token lacks the openid scope')
        throw new OAuthError('insufficient_scope', 'the access token lacks the openid scope', {
          headers: { 'www-authenticate': bearerChallenge(realm, 'insufficient_scope', ', scope="openid"') },
        })
      }
      const user = await deps.users.findBySubjectId(read.claims.sub)
      if (!user || !user.enabled) throw refuse()
      const catalogue = await deps.resources.loadCatalogue()
      // §5.3.2: sub always, and always the token's subject (no stored claim may replace it).
      const out: Record<string, unknown> = { sub: user.subjectId }
      for (const scope of scopes) {
        const resource = catalogue.identityResources.get(scope)
        if (!resource?.enabled) continue
        for (const c of resource.claims) if (c !== 'sub' && user.claims[c] !== undefined) out[c] = user.claims[c]
      }
      return out
    },
  }
}
