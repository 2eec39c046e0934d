// The client side of an upstream OpenID Connect provider, through openid-client: its discovery
// document read from {authority}/.well-known/openid-configuration when first needed (never at
// start-up), kept for a while and read again after that or after a failure. Every call upstream
// (discovery, token request, JWKS) is bounded by the timeout (10 s unless an embedder says
// otherwise). The client secret is decrypted here, only when used, and never logged.
import * as oidc from 'openid-client'
import type { Clock } from '../../domain/clock.js'
import { isLocalHost } from '../../domain/redirect-uri.js'
import type { IdentityProvider } from '../../domain/types.js'
import { decryptAtRest, deriveKeyEncryptionKey, identityProviderSecretAad } from '../../keys/key-crypto.js'

export interface UpstreamOptions {
  /** Seconds every request upstream may take: discovery, token request, JWKS. */
  timeoutSeconds: number
  /** Seconds a discovery document (and the JWKS openid-client keeps with it) is used before it is read again. */
  metadataTtlSeconds: number
  /** The fetch used upstream (tests: an in-process upstream, or one that never answers). */
  fetch?: oidc.CustomFetch | undefined
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = { timeoutSeconds: 10, metadataTtlSeconds: 3600 }

export interface Upstreams {
  /** The provider's client configuration; throws UpstreamUnavailable when it cannot be had in time. */
  configuration(provider: IdentityProvider): Promise<oidc.Configuration>
  /** Forgets every discovery document read: the next sign-in reads its provider's again. */
  forget(): void
}

/** An upstream that did not answer in time, or answered what no sign-in can use. */
export class UpstreamUnavailable extends Error {
  constructor(
    readonly scheme: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`identity provider ${scheme}: ${reason}`, options)
    this.name = 'UpstreamUnavailable'
  }
}

export function createUpstreams(deps: { clock: Clock; keyEncryptionSecret: string | undefined; options: UpstreamOptions }): Upstreams {
  const { clock, options } = deps
  const key = deps.keyEncryptionSecret === undefined ? undefined : deriveKeyEncryptionKey(deps.keyEncryptionSecret)
  const cache = new Map<string, { fingerprint: string; at: number; config: Promise<oidc.Configuration> }>()

  function secretOf(p: IdentityProvider): string | undefined {
    if (!p.clientSecret) return undefined
    if (!p.clientSecret.encrypted) return p.clientSecret.value
    if (!key) throw new UpstreamUnavailable(p.scheme, 'its client secret is encrypted and KEY_ENCRYPTION_SECRET is not set')
    return decryptAtRest(p.clientSecret.value, key, identityProviderSecretAad(p.scheme), `identity provider ${p.scheme} secret`)
  }

  async function discover(p: IdentityProvider): Promise<oidc.Configuration> {
    const secret = secretOf(p)
    const authority = new URL(p.authority)
    const insecure = authority.protocol === 'http:' && isLocalHost(authority.hostname)
    // openid-client reads the time from Date.now(); the skew makes it read the injected clock.
    const skew = Math.round((clock.now() - Date.now()) / 1000)
    let config: oidc.Configuration
    try {
      config = await oidc.discovery(
        authority,
        p.clientId,
        { ...(secret !== undefined ? { client_secret: secret } : {}), [oidc.clockSkew]: skew },
        secret !== undefined ? oidc.ClientSecretBasic(secret) : oidc.None(),
        {
          timeout: options.timeoutSeconds,
          ...(options.fetch ? { [oidc.customFetch]: options.fetch } : {}),
          ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      )
    } catch (err) {
      throw new UpstreamUnavailable(p.scheme, 'its discovery document could not be read', { cause: err })
    }
    // OIDC Core §3.1.3.7 lets a client trust TLS instead of the ID token's signature when it comes
    // from the token endpoint, and openid-client does unless told otherwise: nothing the upstream
    // did not sign is trusted here, so the signature is checked against its JWKS as well.
    oidc.enableNonRepudiationChecks(config)
    return config
  }

  return {
    configuration(p) {
      const fingerprint = JSON.stringify([p.authority, p.clientId, p.clientSecret])
      const now = clock.now()
      const hit = cache.get(p.scheme)
      if (hit && hit.fingerprint === fingerprint && now - hit.at < options.metadataTtlSeconds * 1000) return hit.config
      const entry = { fingerprint, at: now, config: discover(p) }
      cache.set(p.scheme, entry)
      // A failure is not kept: the next sign-in tries again.
      entry.config.catch(() => cache.get(p.scheme) === entry && cache.delete(p.scheme))
      return entry.config
    },
    forget: () => cache.clear(),
  }
}
