// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2–§3): ends the person's session
// on the shared foundation, then sends them back to the client only at a post_logout_redirect_uri
// the client registered (exact string match), with its state; otherwise a signed-out page.
//
// Who asks: a logout request is a plain link anyone can put on a page, so ending the session at
// once is only right when the request proves it comes from a client of this very session: an
// id_token_hint of ours whose sid is the session's. An ID token without sid (password, CIBA and
// device grants) names the user, not this session: it may be years old, issued before this
// sign-in, or held by any app of the user's, so it proves nothing about who sent the request.
// Anything else gets a confirmation page first (§2: "the OP SHOULD ask the End-User whether to
// log out"). Bad parameters are a page, never a redirect.
//
// A POST without a session proves nothing either: the session cookie is SameSite=Lax, so a
// cross-site POST (an RP's logout form, or an attacker's) never carries it. Ending "nothing" there
// would clear the cookie in the browser while the session lives on and its clients are never told
// (logout CSRF); so such a request changes nothing and asks, and the person's own confirmation,
// a same-origin POST that carries the cookie, ends the session. A GET is a top-level navigation
// that does carry a Lax cookie: without a session there, the person is already signed out.
import { OAuthError } from '../../errors.js'
import type { Session } from '../../interaction/session.js'
import type { ClientStore } from '../../stores/clients.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import { readIdTokenHint } from '../../tokens/id-token-hint.js'
import { checkNoControlCharacters } from '../../domain/input-limits.js'
import { END_SESSION_CONFIRM_PATH } from '../../endpoints.js'

export interface LogoutRequest {
  /** Where to send the person afterwards (a registered URI, state added), or undefined: the signed-out page. */
  redirectTo: string | undefined
  clientName: string | undefined
  /** The request proves it comes from a client of the current session. */
  proven: boolean
}

export type EndSessionOutcome =
  /** formActionOrigins: where the confirmed form's redirect may go (CSP form-action applies to it). */
  /** username: undefined when the request carried no session (a cross-site POST cannot). */
  | { kind: 'confirm'; clientName: string | undefined; username: string | undefined; action: string; formActionOrigins: string[] }
  | { kind: 'done'; redirectTo: string | undefined }

export interface EndSessionDeps {
  issuer: string
  clients: Pick<ClientStore, 'findById'>
  keys: Pick<SigningKeyService, 'verify'>
}

/** Longest values of the parameters we know (a Map: a name the request chose never finds an inherited entry); others 2000. */
const LIMITS: ReadonlyMap<string, number> = new Map([
  ['id_token_hint', 4000],
  ['post_logout_redirect_uri', 400],
  ['state', 1000],
  ['client_id', 200],
])
const invalid = (d: string) => new OAuthError('invalid_request', d)

export interface EndSessionService {
  /**
   * The request: end the session now (proven), or ask first. `query` is the request's own query,
   * for the form's action; `method` says whether the request could have carried the session cookie.
   */
  start(raw: Array<[string, string]>, session: Session | undefined, query: string, method: 'GET' | 'POST'): Promise<EndSessionOutcome>
  /** The confirmation form was sent: the session ends (the route does it) and the person goes on. */
  confirm(raw: Array<[string, string]>, session: Session | undefined): Promise<EndSessionOutcome>
}

export function createEndSessionService(deps: EndSessionDeps): EndSessionService {
  async function validate(raw: Array<[string, string]>, session: Session | undefined): Promise<LogoutRequest> {
    const params = new Map<string, string>()
    for (const [k, v] of raw) {
      const label = LIMITS.has(k) ? k : 'a parameter' // never a name the request made up (RFC 6749 §5.2)
      checkNoControlCharacters(v, label)
      if (params.has(k)) throw invalid(`${label} is repeated`)
      if (v.length > (LIMITS.get(k) ?? 2000)) throw invalid(`${label} is too long`)
      if (v !== '') params.set(k, v)
    }
    const hintText = params.get('id_token_hint')
    const hint = hintText === undefined ? undefined : await readIdTokenHint(deps.keys, deps.issuer, hintText)
    if (hintText !== undefined && !hint) throw invalid('id_token_hint is not an ID token issued by this server')
    let clientId = params.get('client_id')
    if (hint) {
      if (clientId !== undefined && !hint.audiences.includes(clientId)) throw invalid('client_id does not match id_token_hint')
      clientId ??= hint.audiences[0]
    }
    const client = clientId === undefined ? undefined : await deps.clients.findById(clientId)
    if (clientId !== undefined && (!client || !client.enabled)) throw invalid('client_id is unknown or the client is disabled')
    const uri = params.get('post_logout_redirect_uri')
    let redirectTo: string | undefined
    if (uri !== undefined) {
      // §3: without a client to check it against, the URI cannot be trusted.
      if (!client) throw invalid('post_logout_redirect_uri needs id_token_hint or client_id')
      if (!client.postLogoutRedirectUris.includes(uri)) throw invalid('post_logout_redirect_uri is not registered for this client')
      const url = new URL(uri)
      const state = params.get('state')
      if (state !== undefined) url.searchParams.set('state', state)
      redirectTo = url.href
    }
    const proven = hint?.sid !== undefined && session !== undefined && hint.sid === session.sid
    return { redirectTo, clientName: client ? (client.clientName ?? client.clientId) : undefined, proven }
  }

  return {
    /**
     * The request: end the session now (proven), or ask first. `query` is the request's own query,
     * for the form's action; `method` says whether the request could have carried the session cookie.
     */
    async start(
      raw: Array<[string, string]>,
      session: Session | undefined,
      query: string,
      method: 'GET' | 'POST',
    ): Promise<EndSessionOutcome> {
      const req = await validate(raw, session)
      if (session ? req.proven : method === 'GET') return { kind: 'done', redirectTo: req.redirectTo }
      return {
        kind: 'confirm',
        clientName: req.clientName,
        username: session?.username,
        action: `${END_SESSION_CONFIRM_PATH}${query ? `?${query}` : ''}`,
        formActionOrigins: req.redirectTo ? [new URL(req.redirectTo).origin] : [],
      }
    },

    /** The confirmation form was sent: the session ends (the route does it) and the person goes on. */
    async confirm(raw: Array<[string, string]>, session: Session | undefined): Promise<EndSessionOutcome> {
      const req = await validate(raw, session)
      return { kind: 'done', redirectTo: req.redirectTo }
    },
  }
}
