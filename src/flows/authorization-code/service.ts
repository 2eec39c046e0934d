// The authorization endpoint's logic (RFC 6749 §4.1, OIDC Core §3.1.2, RFC 9207), on the shared
// foundation: the session (src/interaction/session.ts), the sign-in page (it returns here), the
// consent store and the decision screen. Returns outcomes; HTTP lives in src/flows/authorization-code/routes.ts.
//
// prompt=login and max_age ask for a sign-in at this request. The way back from the sign-in page
// is this endpoint's own URL with the request's parameters plus `sign_in=<ms>.<mac>`: the moment
// the sign-in was asked for, MACed with a server secret over the parameters. A session that
// started after that moment satisfies the request, so the person is not sent round again; a
// marker cannot be forged, nor moved to another request (its state and nonce differ). A sign-in
// through an upstream provider passes prompt=login and max_age on (describe's reauthentication).
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../domain/clock.js'
import { OAuthError } from '../../errors.js'
import { SATISFIED_ACR_VALUES } from '../../grants/acr-values.js'
import { signInRecord, type SignInRecord } from '../../grants/sign-in-record.js'
import { passkeyAcr } from '../../grants/passkey-acr.js'
import type { ScopeResolver } from '../../grants/scopes.js'
import type { ConsentService } from '../../interaction/consent.js'
import { signedInAt, type IdentityProviderDirectory } from '../../interaction/identity-providers.js'
import { decisionView, type DecisionView } from '../../interaction/decision.js'
import { RETURN_TO_MAX, type ErrorResponse, type ReturnTargetInfo, type SignInError } from '../../interaction/return-to.js'
import { sessionSatisfies, type Session, type SessionService } from '../../interaction/session.js'
import type { ClientStore } from '../../stores/clients.js'
import type { GrantStore } from '../../stores/grants.js'
import type { ResourceStore } from '../../stores/resources.js'
import { newHandle } from '../../tokens/handles.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import {
  reauthenticationOf,
  resolveTarget,
  validateRequest,
  type AuthorizationRequest,
  type RawParams,
  type ResponseTarget,
} from './request.js'
import { readIdTokenHint } from '../../tokens/id-token-hint.js'
import { AUTHORIZE_PATH, AUTHORIZE_CONSENT_PATH } from '../../endpoints.js'

const MARKER = 'sign_in'

/**
 * What an authorization code's row holds (persisted_grants.data): what the token request checks
 * and issues from, with the session's sign-in (authTime in ms, amr, idp).
 */
export interface AuthorizationCodeData extends SignInRecord {
  redirectUri: string
  codeChallenge: string | undefined
  nonce: string | undefined
  scope: string
  resource: string | undefined
  sid: string
  acr: string
  tenant: string | undefined
}

export type AuthorizeOutcome =
  | { kind: 'sign-in'; returnTo: string }
  | { kind: 'consent'; view: DecisionView; action: string; switchAccount: string; target: ResponseTarget }
  /** Back to the client: `params` go to target.redirectUri as response_mode says. */
  | { kind: 'respond'; target: ResponseTarget; params: Record<string, string> }

export interface AuthorizeDeps {
  issuer: string
  /** Seconds (AUTHORIZATION_CODE_LIFETIME). */
  codeLifetime: number
  clock: Clock
  clients: Pick<ClientStore, 'findById'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  scopes: ScopeResolver
  consent: ConsentService
  sessions: Pick<SessionService, 'addClient'>
  grants: Pick<GrantStore, 'store'>
  keys: Pick<SigningKeyService, 'verify'>
  /** 32 bytes: MACs the sign-in marker. */
  secret: Buffer
  providers: Pick<IdentityProviderDirectory, 'idpNames'>
}

export interface AuthorizeService {
  /** Stage 1 (page errors only): the client and its redirect URI. */
  target: (raw: RawParams) => Promise<ResponseTarget>
  /** GET or POST /connect/authorize: sign-in, consent, or the code. Errors go to the redirect URI. */
  start(target: ResponseTarget, raw: RawParams, session: Session | undefined): Promise<AuthorizeOutcome>
  /** The consent form's answer. A session that no longer fits goes round the sign-in again. */
  decide(target: ResponseTarget, raw: RawParams, session: Session | undefined, form: Record<string, string>): Promise<AuthorizeOutcome>
  /** For the sign-in page: the client behind an authorization URL, its login_hint, its redirect origin. */
  describe(url: URL): Promise<ReturnTargetInfo | undefined>
  /** A sign-in elsewhere failed: the error for the client's redirect URI (RFC 6749 §4.1.2.1, with iss: RFC 9207). */
  fail(url: URL, error: SignInError, description: string): Promise<ErrorResponse | undefined>
}

export function createAuthorizeService(deps: AuthorizeDeps): AuthorizeService {
  const { clock } = deps
  const mac = (at: string, query: string) => createHmac('sha256', deps.secret).update(`authorize sign-in v1\n${at}\n${query}`).digest()

  /** The request's parameters (no marker) as a query string, in their order. */
  function query(params: Map<string, string>): string {
    const q = new URLSearchParams()
    for (const [k, v] of params) if (k !== MARKER) q.append(k, v)
    return q.toString()
  }

  /** When the sign-in for this very request was asked for, if the marker is ours. */
  function markerTime(params: Map<string, string>): number | undefined {
    const [at, given] = (params.get(MARKER) ?? '').split('.')
    if (!at || !given || !/^\d{1,15}$/.test(at)) return undefined
    const presented = Buffer.from(given, 'base64url')
    const expected = mac(at, query(params))
    return presented.length === expected.length && timingSafeEqual(presented, expected) ? Number(at) : undefined
  }

  function returnTo(req: AuthorizationRequest, now: number): string {
    const q = query(req.params)
    const url = `${AUTHORIZE_PATH}?${q}&${MARKER}=${now}.${mac(String(now), q).toString('base64url')}`
    if (url.length > RETURN_TO_MAX) throw new OAuthError('invalid_request', 'the request is too long to continue after sign-in')
    return url
  }

  /** Whether the session is the right one, signed in recently enough (prompt=login, max_age, id_token_hint). */
  async function sessionFits(req: AuthorizationRequest, session: Session | undefined, now: number): Promise<Session | undefined> {
    return (await fits(req, session, now)) ? session : undefined
  }

  async function fits(req: AuthorizationRequest, session: Session | undefined, now: number): Promise<boolean> {
    if (!session) return false
    // acr_values idp: asks for a sign-in at that provider (or locally): a session from elsewhere does not do.
    if (!signedInAt(session, req.acr.idp)) return false
    if (req.idTokenHint !== undefined) {
      const hint = await readIdTokenHint(deps.keys, deps.issuer, req.idTokenHint)
      if (!hint || !hint.audiences.includes(req.client.clientId))
        throw new OAuthError('invalid_request', 'id_token_hint is not an ID token issued to this client')
      if (hint.sub !== session.subjectId) return false
    }
    // Signed in for this request: the session began after the sign-in was asked for. Its start,
    // not auth_time: an upstream provider's auth_time is by its own clock, in whole seconds.
    const asked = markerTime(req.params)
    if (asked !== undefined && session.startedAt >= asked) return true
    return sessionSatisfies(session, { maxAge: req.maxAge, signedInAfter: req.prompt.has('login') ? now + 1 : undefined }, now)
  }

  async function consentView(req: AuthorizationRequest, session: Session): Promise<AuthorizeOutcome> {
    const catalogue = await deps.resources.loadCatalogue()
    const q = query(req.params)
    return {
      kind: 'consent',
      target: req,
      action: `${AUTHORIZE_CONSENT_PATH}?${req.params.has(MARKER) ? `${q}&${MARKER}=${req.params.get(MARKER)}` : q}`,
      switchAccount: `${AUTHORIZE_PATH}?${q}`,
      view: decisionView(catalogue, {
        client: req.client,
        username: session.username,
        scopes: req.granted.scopes,
        details: [
          { label: 'tenant', value: req.acr.tenant },
          { label: 'identity-provider', value: req.acr.idp },
        ],
        approveAction: 'allow',
        offerRemember: true,
      }),
    }
  }

  /** Issues the code (RFC 6749 §4.1.2): 256 bits, stored hashed, bound to everything the token request checks. */
  async function issueCode(req: AuthorizationRequest, session: Session): Promise<AuthorizeOutcome> {
    const now = clock.now()
    const code = newHandle()
    const data: AuthorizationCodeData = {
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      nonce: req.nonce,
      scope: req.granted.scopes.join(' '),
      resource: req.params.get('resource'),
      ...signInRecord(session, req.acr.idp),
      sid: session.sid,
      acr: passkeyAcr(session.amr) ?? req.acr.acrValues.find((v) => SATISFIED_ACR_VALUES.includes(v)) ?? '1',
      tenant: req.acr.tenant,
    }
    await deps.grants.store({
      handle: code,
      kind: 'authorization_code',
      clientId: req.client.clientId,
      subjectId: session.subjectId,
      familyId: randomUUID(),
      data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
      createdAt: now,
      expiresAt: now + deps.codeLifetime * 1000,
    })
    await deps.sessions.addClient(session, req.client.clientId)
    return { kind: 'respond', target: req, params: responseParams(req, { code }) }
  }

  function responseParams(target: ResponseTarget, out: Record<string, string>): Record<string, string> {
    return { ...out, ...(target.state !== undefined ? { state: target.state } : {}), iss: deps.issuer } // RFC 9207 §2
  }

  return {
    /** Stage 1 (page errors only): the client and its redirect URI. */
    target: (raw: RawParams) => resolveTarget(deps.clients, raw),

    /** GET or POST /connect/authorize: sign-in, consent, or the code. Errors go to the redirect URI. */
    async start(target: ResponseTarget, raw: RawParams, session: Session | undefined): Promise<AuthorizeOutcome> {
      const req = await validateRequest(target, raw, deps.scopes, deps.providers)
      const now = clock.now()
      const live = await sessionFits(req, session, now)
      if (!live) {
        if (req.prompt.has('none')) throw new OAuthError('login_required', 'the user must sign in')
        return { kind: 'sign-in', returnTo: returnTo(req, now) }
      }
      const missing = await deps.consent.missing(req.client, live.subjectId, req.granted.scopes)
      if (missing.length > 0 || req.prompt.has('consent')) {
        if (req.prompt.has('none')) throw new OAuthError('consent_required', 'the user must consent')
        return consentView(req, live)
      }
      return issueCode(req, live)
    },

    /** The consent form's answer. A session that no longer fits goes round the sign-in again. */
    async decide(
      target: ResponseTarget,
      raw: RawParams,
      session: Session | undefined,
      form: Record<string, string>,
    ): Promise<AuthorizeOutcome> {
      const req = await validateRequest(target, raw, deps.scopes, deps.providers)
      const now = clock.now()
      const live = await sessionFits(req, session, now)
      if (!live) return { kind: 'sign-in', returnTo: returnTo(req, now) }
      if (form.decision === 'deny') throw new OAuthError('access_denied', 'the user denied the request')
      if (form.decision !== 'approve') return consentView(req, live)
      await deps.consent.grant(live.subjectId, req.client.clientId, req.granted.scopes, form.remember === 'yes')
      return issueCode(req, live)
    },

    async fail(url: URL, error: SignInError, description: string): Promise<ErrorResponse | undefined> {
      const target = await resolveTarget(deps.clients, [...url.searchParams]).catch(() => undefined)
      if (!target) return undefined
      return {
        redirectUri: target.redirectUri,
        params: responseParams(target, { error, error_description: description }),
        formPost: target.responseMode === 'form_post',
      }
    },

    /** For the sign-in page: the client behind an authorization URL, its login_hint, its redirect origin. */
    async describe(url: URL): Promise<ReturnTargetInfo | undefined> {
      const target = await resolveTarget(deps.clients, [...url.searchParams]).catch(() => undefined)
      if (!target) return undefined
      const { clientId, clientName, identityProviderRestrictions, enableLocalLogin } = target.client
      const idp = (url.searchParams.get('acr_values') ?? '').split(' ').find((v) => v.startsWith('idp:') && v.length > 4)
      return {
        client: { clientId, clientName: clientName ?? clientId },
        loginHint: url.searchParams.get('login_hint') ?? undefined,
        formActionOrigins: [new URL(target.redirectUri).origin],
        providers: { identityProviderRestrictions, enableLocalLogin, idp: idp?.slice(4) },
        reauthentication: reauthenticationOf(url.searchParams),
      }
    },
  }
}
