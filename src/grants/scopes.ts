// Scope and resource validation shared by every grant and by CIBA: RFC 6749 §3.3 (scope),
// RFC 8707 §2 (resource indicators → invalid_target), OIDC Core §11 (offline_access).
import { isAdminScope } from '../domain/admin-scopes.js'
import type { Client, ResolvedScopes } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ResourceCatalogue, ResourceStore } from '../stores/resources.js'

export interface ScopeResolver {
  /** scope param (space-delimited) or undefined → client's API scopes; throws invalid_scope / invalid_target */
  resolve(
    client: Client,
    scopeParam: string | undefined,
    opts: { allowIdentity: boolean; resource?: string | undefined },
  ): Promise<ResolvedScopes>
}

export const OFFLINE_ACCESS = 'offline_access'

// Fixed descriptions: an error_description never repeats the request's own values (RFC 6749 §5.2).
const NOT_ALLOWED = 'scope holds a value this client may not request'
const OFFLINE_NOT_ALLOWED = 'scope offline_access is not allowed for this client or grant'
const IDENTITY_NOT_ALLOWED = 'scope holds an OpenID Connect scope, which this grant does not allow'
const UNKNOWN = 'scope holds a value that is not an enabled scope'

function requestedScopes(scopeParam: string | undefined, client: Client, cat: ResourceCatalogue): string[] {
  if (scopeParam === undefined) {
    // Omitted: every API scope the client is explicitly allowed (Duende's default); never the
    // admin scopes, which are granted only when asked for (src/domain/admin-scopes.ts).
    return client.allowedScopes.filter((s) => cat.apiScopes.get(s)?.enabled === true)
  }
  const out: string[] = []
  for (const s of scopeParam.split(' ')) if (s !== '' && !out.includes(s)) out.push(s)
  return out
}

function resolveTarget(cat: ResourceCatalogue, resource: string | undefined) {
  if (resource === undefined) return undefined
  // RFC 8707 §2: an absolute URI without a fragment, or here the name of a registered API resource.
  if (resource.includes('#')) throw new OAuthError('invalid_target', 'resource must not contain a fragment')
  const api = cat.apiResources.get(resource)
  if (!api || !api.enabled) throw new OAuthError('invalid_target', 'unknown resource')
  return api
}

// scope → names of the enabled API resources that carry it; built once per cached catalogue.
const scopeIndex = new WeakMap<ResourceCatalogue, Map<string, string[]>>()

function audiencesFor(cat: ResourceCatalogue, apiScopes: string[]): string[] {
  let index = scopeIndex.get(cat)
  if (!index) {
    index = new Map()
    for (const api of cat.apiResources.values()) {
      if (!api.enabled) continue
      for (const s of api.scopes) (index.get(s) ?? index.set(s, []).get(s)!).push(api.name)
    }
    scopeIndex.set(cat, index)
  }
  // In the order of the granted scopes, so that `aud` is deterministic.
  const out: string[] = []
  for (const s of apiScopes) for (const name of index.get(s) ?? []) if (!out.includes(name)) out.push(name)
  return out
}

export function createScopeResolver(deps: { resources: ResourceStore }): ScopeResolver {
  return {
    async resolve(client, scopeParam, opts) {
      const cat = await deps.resources.loadCatalogue()
      const target = resolveTarget(cat, opts.resource)
      const requested = requestedScopes(scopeParam, client, cat)
      const apiScopes: string[] = []
      const identityScopes: string[] = []
      let offlineAccess = false
      for (const s of requested) {
        if (s === OFFLINE_ACCESS) {
          if (!opts.allowIdentity || !client.allowOfflineAccess) throw new OAuthError('invalid_scope', OFFLINE_NOT_ALLOWED)
          offlineAccess = true
          continue
        }
        if (!client.allowedScopes.includes(s)) throw new OAuthError('invalid_scope', NOT_ALLOWED)
        if (cat.apiScopes.get(s)?.enabled || isAdminScope(s)) {
          // RFC 8707: a resource restricts the token to that API's scopes.
          if (!target || target.scopes.includes(s)) apiScopes.push(s)
        } else if (cat.identityResources.get(s)?.enabled) {
          if (!opts.allowIdentity) throw new OAuthError('invalid_scope', IDENTITY_NOT_ALLOWED)
          identityScopes.push(s)
        } else {
          throw new OAuthError('invalid_scope', UNKNOWN)
        }
      }
      if (target && apiScopes.length === 0) throw new OAuthError('invalid_target', 'the resource accepts none of the requested scopes')
      if (apiScopes.length === 0 && identityScopes.length === 0 && !offlineAccess) {
        throw new OAuthError('invalid_scope', 'no scope requested and none allowed by default')
      }
      const scopes = [...identityScopes, ...apiScopes]
      if (offlineAccess) scopes.push(OFFLINE_ACCESS)
      const audiences = target ? [target.name] : audiencesFor(cat, apiScopes)
      return { scopes, apiScopes, identityScopes, offlineAccess, audiences }
    },
  }
}

/**
 * RFC 8707 §2.2: a token request's `resource` picks one of the resources the grant covers; the
 * access token is then for that one alone (its `aud`, its scopes), while the grant itself, and so
 * a refresh token issued beside it, keeps them all. Undefined: the grant as it is.
 */
export async function narrowToResource(
  scopes: ScopeResolver,
  client: Client,
  granted: ResolvedScopes,
  resource: string | undefined,
): Promise<ResolvedScopes> {
  if (resource === undefined) return granted
  if (resource.includes('#')) throw new OAuthError('invalid_target', 'resource must not contain a fragment')
  if (!granted.audiences.includes(resource)) throw new OAuthError('invalid_target', 'resource is not part of the grant')
  return scopes.resolve(client, granted.scopes.join(' '), {
    allowIdentity: granted.identityScopes.length > 0 || granted.offlineAccess,
    resource,
  })
}
