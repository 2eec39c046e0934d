// Where the sign-in page sends a person afterwards. The target comes from the request
// (`return_to`), so it is never trusted as given: it must be a local path (no scheme, no host,
// no `//` or `\` tricks: no open redirect, RFC 9700 §4.11), on a path that a flow has registered,
// and that flow must recognise it (its describe() answers). Anything else is ignored and the
// person lands on the account page. The flow's answer is also how the sign-in page knows which
// application is asking before a password is typed: it comes from the flow's own state (the
// CIBA request, the authorization request), never from a parameter anyone could set.
import type { ProviderPolicy } from './identity-providers.js'

/** What a flow tells the sign-in page about a target it recognises. */
export interface ReturnTargetInfo {
  /** The application on whose behalf the person signs in (shown on the page, logged on failure). */
  client?: { clientId: string; clientName: string } | undefined
  /** A username to fill in (e.g. the authorization request's login_hint). */
  loginHint?: string | undefined
  /**
   * Origins the flow may redirect to right after the sign-in (e.g. a client's validated
   * redirect_uri). Browsers apply the page's CSP form-action to every redirect that follows a
   * form submission, so the sign-in page must allow them.
   */
  formActionOrigins?: string[] | undefined
  /**
   * Which identity providers the sign-in may offer (the client's identityProviderRestrictions and
   * enableLocalLogin), and the provider the request named (acr_values `idp:`), if any.
   */
  providers?: (ProviderPolicy & { idp: string | undefined }) | undefined
  /**
   * What the request demands of the sign-in (OIDC Core §3.1.2.1): prompt=login, and max_age in
   * seconds. A sign-in through an upstream provider asks the upstream for the same.
   */
  reauthentication?: Reauthentication | undefined
}

export interface Reauthentication {
  promptLogin: boolean
  maxAge: number | undefined
}

/** An error for the application, where the flow has a safe way to tell it (a validated redirect URI). */
export interface ErrorResponse {
  redirectUri: string
  params: Record<string, string>
  formPost: boolean
}

/** The errors a sign-in elsewhere can end in: the person cancelled, or the upstream failed (RFC 6749 §4.1.2.1). */
export type SignInError = 'access_denied' | 'temporarily_unavailable'

export interface ReturnTargetFlow {
  /** The exact path of the flow's page, e.g. '/ciba/approve'. */
  path: string
  /** The target's details, or undefined when the flow does not recognise it (then it is ignored). */
  describe(target: URL): Promise<ReturnTargetInfo | undefined>
  /** How to tell the application that the sign-in failed; undefined (or none): the person gets a page. */
  fail?(target: URL, error: SignInError, description: string): Promise<ErrorResponse | undefined>
}

export interface ReturnTarget extends ReturnTargetInfo {
  /** The normalised local path and query to redirect to. */
  location: string
  /** The flow's fail(), for this target. */
  fail(error: SignInError, description: string): Promise<ErrorResponse | undefined>
}

export interface ReturnTargets {
  /** Registers a flow's page as a place the sign-in page may return to. */
  allow(flow: ReturnTargetFlow): void
  /** The validated target, or undefined when `raw` must be ignored. */
  resolve(raw: unknown): Promise<ReturnTarget | undefined>
}

/** Longest accepted return_to (an authorization request that needs more should keep its state server-side). */
export const RETURN_TO_MAX = 4096

const ORIGIN = 'http://return-to.invalid'

/** The local path and query of `raw`, or undefined when it is not a plain local path. */
export function parseLocalPath(raw: unknown): URL | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > RETURN_TO_MAX) return undefined
  // Only "/x…": not "//host", not "/\host" (browsers read "\" as "/"), no control characters.
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (raw[0] !== '/' || raw[1] === '/' || raw.includes('\\') || /[\x00-\x20\x7f]/.test(raw)) return undefined
  let url: URL
  try {
    url = new URL(raw, ORIGIN)
  } catch {
    return undefined
  }
  if (url.origin !== ORIGIN || url.hash !== '') return undefined
  return url
}

export function createReturnTargets(): ReturnTargets {
  const flows = new Map<string, ReturnTargetFlow>()
  return {
    allow(flow) {
      if (!flow.path.startsWith('/') || flows.has(flow.path)) throw new Error(`return target ${flow.path}: not a path, or registered twice`)
      flows.set(flow.path, flow)
    },
    async resolve(raw) {
      const url = parseLocalPath(raw)
      const flow = url && flows.get(url.pathname)
      if (!url || !flow) return undefined
      const info = await flow.describe(url)
      const fail = (error: SignInError, description: string) => flow.fail?.(url, error, description) ?? Promise.resolve(undefined)
      return info && { ...info, location: `${url.pathname}${url.search}`, fail }
    },
  }
}
