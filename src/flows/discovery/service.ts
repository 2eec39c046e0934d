// OpenID Connect Discovery 1.0 §3 / RFC 8414 §2 metadata, and the JWKS (RFC 7517 §5).
//
// HOW FEATURES ADD THEIR MEMBERS: the document lists only what is implemented, so each feature
// contributes its own members in its register() (src/flows/<flow>/index.ts), without touching
// this file or the route:
//
//   core.discovery.contribute(() => ({
//     introspection_endpoint: `${config.issuer}/connect/introspect`,
//     grant_types_supported: ['client_credentials'],
//   }))
//
// A contribution is a function (sync or async) called for every document, so it may read live
// state (the resource catalogue, the grant registry). Members are merged in registration order:
// arrays are united (so grant_types_supported can come from several grants, without duplicates),
// anything else is overwritten by the later contribution.
import type { JWK } from 'jose'
import { KEY_RELOAD_SECONDS, type Config } from '../../config.js'
import type { ResourceCatalogue } from '../../stores/resources.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import { ID_TOKEN_SIGNING_ALGS } from '../../domain/client-profile.js'
import { JWKS_PATH, TOKEN_PATH } from '../../endpoints.js'

import type { DiscoveryContribution, DiscoveryMetadata } from '../../core.js'

export type { DiscoveryContribution, DiscoveryMetadata }

export interface DiscoveryService {
  /** Adds members to the document (see the top of this file). */
  contribute(contribution: DiscoveryContribution): void
  document(): Promise<DiscoveryMetadata>
  jwks(): Promise<{ keys: JWK[] }>
  /** Seconds clients may cache the document and the JWKS (Cache-Control max-age). */
  readonly maxAge: number
}

export interface DiscoveryDeps {
  config: Pick<Config, 'issuer' | 'keyActivationDelay'>
  keys: Pick<SigningKeyService, 'jwks' | 'algorithms'>
  /** The resource catalogue (cached), for scopes_supported and claims_supported. */
  loadCatalogue?: () => Promise<ResourceCatalogue>
  contributions?: DiscoveryContribution[]
}

/** Claims every ID token we issue carries (OIDC Core §2), before identity resources add theirs. */
const BASE_CLAIMS = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'amr', 'sid']

/**
 * 300 s at most. A new key is published KEY_ACTIVATION_DELAY (default 3600 s) before it signs,
 * but a replica publishes it only at its next key reload (every KEY_RELOAD_SECONDS), and a JWKS
 * fetched from a replica just before that reload is cached for max-age more. So max-age is what
 * the delay leaves after the reload: a verifier that respects it always has the key in time.
 */
const MAX_AGE = 300

export function jwksMaxAge(keyActivationDelay: number): number {
  return Math.max(0, Math.min(MAX_AGE, keyActivationDelay - KEY_RELOAD_SECONDS))
}

export function createDiscoveryService(deps: DiscoveryDeps): DiscoveryService {
  const { config, keys } = deps
  // The list itself, not a copy: what flows contribute later (core.discovery) is seen here too.
  const contributions: DiscoveryContribution[] = deps.contributions ?? []

  const base = async (): Promise<DiscoveryMetadata> => {
    const doc: DiscoveryMetadata = {
      issuer: config.issuer,
      jwks_uri: `${config.issuer}${JWKS_PATH}`,
      token_endpoint: `${config.issuer}${TOKEN_PATH}`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      subject_types_supported: ['public'],
      // RS256 (OIDC Core §15.1 requires it), and ES256 for the clients of the fapi2 profile
      // (src/domain/client-profile.ts); nothing else is claimed, whatever else we hold keys for.
      id_token_signing_alg_values_supported: [...ID_TOKEN_SIGNING_ALGS],
      claims_supported: BASE_CLAIMS,
    }
    if (deps.loadCatalogue) {
      const c = await deps.loadCatalogue()
      const enabled = <T extends { enabled: boolean; name: string }>(m: Map<string, T>) => [...m.values()].filter((v) => v.enabled)
      doc.scopes_supported = [...enabled(c.identityResources), ...enabled(c.apiScopes)].map((v) => v.name)
      doc.claims_supported = unite(
        BASE_CLAIMS,
        enabled(c.identityResources).flatMap((r) => r.claims),
      )
    }
    return doc
  }

  return {
    maxAge: jwksMaxAge(config.keyActivationDelay),
    contribute(contribution) {
      contributions.push(contribution)
    },
    async document() {
      let doc = await base()
      for (const contribute of contributions) doc = merge(doc, await contribute())
      return doc
    },
    jwks: () => keys.jwks(),
  }
}

function unite(a: unknown[], b: unknown[]): unknown[] {
  return [...new Set([...a, ...b])]
}

function merge(doc: DiscoveryMetadata, extra: DiscoveryMetadata): DiscoveryMetadata {
  const out = { ...doc }
  for (const [k, v] of Object.entries(extra)) {
    const prev = out[k]
    out[k] = Array.isArray(prev) && Array.isArray(v) ? unite(prev, v) : v
  }
  return out
}
