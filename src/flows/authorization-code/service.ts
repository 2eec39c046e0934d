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
//
// A session recent enough may still be too weak: acr_values mfa or phr, the client's or the
// user's requireMfa, or a second factor the user has (src/interaction/authentication-level.ts).
// Then the person is stepped up (only the missing factor is asked) and comes back here with the
// request as it was; with prompt=none the answer is interaction_required (OIDC Core §3.1.2.6).
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../domain/clock.js'
import { codeLifetimeFor } from '../../domain/client-profile.js'
import type { Client } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import { SATISFIED_ACR_VALUES } from '../../grants/acr-values.js'
import { signInRecord, type SignInRecord } from '../../grants/sign-in-record.js'
import type { ScopeResolver } from '../../grants/scopes.js'
import type { ConsentService } from '../../interaction/consent.js'
import { signedInAt, type IdentityProviderDirectory } from '../../interaction/identity-providers.js'
import { decisionView, unverifiedClient, type DecisionView } from '../../interaction/decision.js'
import { RETURN_TO_MAX, type ErrorResponse, type ReturnTargetInfo, type SignInError } from '../../interaction/return-to.js'
import { sessionSatisfies, type Session, type SessionService } from '../../interaction/session.js'
import { acrOf, stepUpUrl, type LevelCheck } from '../../interaction/authentication-level.js'
import type { ClientStore } from '../../stores/clients.js'
import type { GrantStore } from '../../stores/grants.js'
import type { ResourceStore } from '../../stores/resources.js'
import { newHandle } from '../../tokens/handles.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import {
  collect,
  reauthenticationOf,
  resolveTarget,
  validateRequest,
  type AuthorizationRequest,
  type RawParams,
  type ResponseTarget,
} from '../../interaction/authorization-request.js'
import { checkRequestOrigin, type AuthorizationInput, type AuthorizationInputs } from '../../interaction/pushed-authorization.js'
import type { PushedRequestStore } from '../../stores/pushed-requests.js'
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
  /** RFC 9449 §10: the request's dpop_jkt; the code is redeemed only with a proof of that key. */
  dpopJkt?: string | undefined
}

/** Stage 1's result: where errors go, and where the parameters come from (URL, request_uri, request object). */
export interface ResolvedAuthorization {
  target: ResponseTarget
  input: AuthorizationInput
}

/** A valid request, with its URL's own parameters (for the way back) and the request_uri it is held for. */
type PendingRequest = AuthorizationRequest & { url: Map<string, string>; handle: string | undefined }

export type AuthorizeOutcome =
  | { kind: 'sign-in'; returnTo: string }
  /** The session is too weak for the request: to the page of the missing factor, which returns here. */
  | { kind: 'step-up'; location: string }
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
  /** request_uri and request objects (src/interaction/pushed-authorization.ts). */
  inputs: AuthorizationInputs
  pushed: Pick<PushedRequestStore, 'use'>
  /** PAR_REQUIRED. */
  parRequired: boolean
  levels: LevelCheck
}

export interface AuthorizeService {
  /** Stage 1 (page errors only): the client, its redirect URI, and the request_uri or request object. */
  target: (raw: RawParams) => Promise<ResolvedAuthorization>
  /** GET or POST /connect/authorize: sign-in, consent, or the code. Errors go to the redirect URI. */
  start(resolved: ResolvedAuthorization, session: Session | undefined): Promise<AuthorizeOutcome>
  /** The consent form's answer. A session that no longer fits goes round the sign-in again. */
  decide(resolved: ResolvedAuthorization, session: Session | undefined, form: Record<string, string>): Promise<AuthorizeOutcome>
  /** For the sign-in page: the client behind an authorization URL, its login_hint, its redirect origin. */
  describe(url: URL): Promise<ReturnTargetInfo | undefined>
  /** A sign-in elsewhere failed: the error for the client's redirect URI (RFC 6749 §4.1.2.1, with iss: RFC 9207). */
  fail(url: URL, error: SignInError, description: string): Promise<ErrorResponse | undefined>
}

/**
 * A client described by a document at its client id is asked about every time: the document may
 * change hands with the domain, and consent remembered for one owner must not carry to the next.
 */
function asksEveryTime(client: Client): boolean {
  return client.selfRegistered === 'metadata-document'
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

  function returnTo(req: PendingRequest, now: number): string {
    const q = query(req.url)
    const url = `${AUTHORIZE_PATH}?${q}&${MARKER}=${now}.${mac(String(now), q).toString('base64url')}`
    if (url.length > RETURN_TO_MAX) throw new OAuthError('invalid_request', 'the request is too long to continue after sign-in')
    return url
  }

  /** Whether the session is the right one, signed in recently enough (prompt=login, max_age, id_token_hint). */
  async function sessionFits(req: PendingRequest, session: Session | undefined, now: number): Promise<Session | undefined> {
    return (await fits(req, session, now)) ? session : undefined
  }

  async function fits(req: PendingRequest, session: Session | undefined, now: number): Promise<boolean> {
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
    const asked = markerTime(req.url)
    if (asked !== undefined && session.startedAt >= asked) return true
    return sessionSatisfies(session, { maxAge: req.maxAge, signedInAfter: req.prompt.has('login') ? now + 1 : undefined }, now)
  }

  /** The step-up the request needs of the session, if any; prompt=none cannot take one. */
  async function stepUp(req: PendingRequest, session: Session): Promise<AuthorizeOutcome | undefined> {
    const step = await deps.levels.next(session, { acrValues: req.acr.acrValues, client: req.client })
    if (step === 'none') return undefined
    if (req.prompt.has('none')) throw new OAuthError('interaction_required', 'the sign-in must be stepped up')
    // Back to this very request, its sign-in marker kept (a new one would ask for a new sign-in).
    const q = query(req.url)
    const back = `${AUTHORIZE_PATH}?${req.url.has(MARKER) ? `${q}&${MARKER}=${req.url.get(MARKER)}` : q}`
    return { kind: 'step-up', location: stepUpUrl(step, back) }
  }

  async function consentView(req: PendingRequest, session: Session): Promise<AuthorizeOutcome> {
    const catalogue = await deps.resources.loadCatalogue()
    const q = query(req.url)
    return {
      kind: 'consent',
      target: req,
      action: `${AUTHORIZE_CONSENT_PATH}?${req.url.has(MARKER) ? `${q}&${MARKER}=${req.url.get(MARKER)}` : q}`,
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
        offerRemember: !asksEveryTime(req.client),
        unverified: unverifiedClient(req.client, req.redirectUri),
      }),
    }
  }

  /** Issues the code (RFC 6749 §4.1.2): 256 bits, stored hashed, bound to everything the token request checks. */
  async function issueCode(req: PendingRequest, session: Session): Promise<AuthorizeOutcome> {
    const now = clock.now()
    // RFC 9126 §4: a request_uri is used up by the code issued from it; of two tabs, one gets it.
    if (req.handle !== undefined && !(await deps.pushed.use(req.handle, now))) throw spentUri()
    const code = newHandle()
    const data: AuthorizationCodeData = {
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      nonce: req.nonce,
      scope: req.granted.scopes.join(' '),
      resource: req.params.get('resource'),
      ...signInRecord(session, req.acr.idp),
      sid: session.sid,
      // The level reached (phr, mfa), else the value a password sign-in satisfies, as before.
      acr: acrOf(session.amr) ?? req.acr.acrValues.find((v) => SATISFIED_ACR_VALUES.includes(v)) ?? '1',
      tenant: req.acr.tenant,
      dpopJkt: req.dpopJkt,
    }
    await deps.grants.store({
      handle: code,
      kind: 'authorization_code',
      clientId: req.client.clientId,
      subjectId: session.subjectId,
      familyId: randomUUID(),
      data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
      createdAt: now,
      expiresAt: now + codeLifetimeFor(req.client, deps.codeLifetime) * 1000,
    })
    await deps.sessions.addClient(session, req.client.clientId)
    return { kind: 'respond', target: req, params: responseParams(req, { code }) }
  }

  /**
   * Stage 2: a held request that is spent, one that did not arrive as the client must send them
   * (PAR, request object), then the parameters themselves. Every error goes to the redirect URI.
   */
  async function prepare({ target, input }: ResolvedAuthorization): Promise<PendingRequest> {
    if (input.spent) throw spentUri()
    checkRequestOrigin(target.client, input, deps.parRequired)
    const req = await validateRequest(target, input.params, deps.scopes, deps.providers)
    return { ...req, url: collect(input.url).params, handle: input.handle }
  }

  /** The target of an authorization URL for the sign-in page (read only: nothing is opened or used). */
  async function peekTarget(url: URL): Promise<{ target: ResponseTarget; params: URLSearchParams } | undefined> {
    const params = await deps.inputs.peek([...url.searchParams]).catch(() => undefined)
    if (!params) return undefined
    const target = await resolveTarget(deps.clients, params).catch(() => undefined)
    return target && { target, params: new URLSearchParams(params) }
  }

  function responseParams(target: ResponseTarget, out: Record<string, string>): Record<string, string> {
    return { ...out, ...(target.state !== undefined ? { state: target.state } : {}), iss: deps.issuer } // RFC 9207 §2
  }

  return {
    /** Stage 1 (page errors only): the client and its redirect URI. */
    async target(raw: RawParams): Promise<ResolvedAuthorization> {
      const input = await deps.inputs.resolve(raw)
      return { target: await resolveTarget(deps.clients, input.params), input }
    },

    /** GET or POST /connect/authorize: sign-in, consent, or the code. Errors go to the redirect URI. */
    async start(resolved: ResolvedAuthorization, session: Session | undefined): Promise<AuthorizeOutcome> {
      const req = await prepare(resolved)
      const now = clock.now()
      const live = await sessionFits(req, session, now)
      if (!live) {
        if (req.prompt.has('none')) throw new OAuthError('login_required', 'the user must sign in')
        return { kind: 'sign-in', returnTo: returnTo(req, now) }
      }
      const weak = await stepUp(req, live)
      if (weak) return weak
      // A client nobody configured is asked about at least once, whatever it says of itself.
      const asked = req.client.selfRegistered ? { ...req.client, requireConsent: true } : req.client
      const missing = await deps.consent.missing(asked, live.subjectId, req.granted.scopes)
      if (missing.length > 0 || req.prompt.has('consent') || asksEveryTime(req.client)) {
        if (req.prompt.has('none')) throw new OAuthError('consent_required', 'the user must consent')
        return consentView(req, live)
      }
      return issueCode(req, live)
    },

    /** The consent form's answer. A session that no longer fits goes round the sign-in again. */
    async decide(resolved: ResolvedAuthorization, session: Session | undefined, form: Record<string, string>): Promise<AuthorizeOutcome> {
      const req = await prepare(resolved)
      const now = clock.now()
      const live = await sessionFits(req, session, now)
      if (!live) return { kind: 'sign-in', returnTo: returnTo(req, now) }
      const weak = await stepUp(req, live)
      if (weak) return weak
      if (form.decision === 'deny') throw new OAuthError('access_denied', 'the user denied the request')
      if (form.decision !== 'approve') return consentView(req, live)
      const remember = form.remember === 'yes' && !asksEveryTime(req.client)
      await deps.consent.grant(live.subjectId, req.client.clientId, req.granted.scopes, remember)
      return issueCode(req, live)
    },

    async fail(url: URL, error: SignInError, description: string): Promise<ErrorResponse | undefined> {
      const peeked = await peekTarget(url)
      if (!peeked) return undefined
      const { target } = peeked
      return {
        redirectUri: target.redirectUri,
        params: responseParams(target, { error, error_description: description }),
        formPost: target.responseMode === 'form_post',
      }
    },

    /** For the sign-in page: the client behind an authorization URL, its login_hint, its redirect origin. */
    async describe(url: URL): Promise<ReturnTargetInfo | undefined> {
      const peeked = await peekTarget(url)
      if (!peeked) return undefined
      const { target, params } = peeked
      const { clientId, clientName, identityProviderRestrictions, enableLocalLogin } = target.client
      const idp = (params.get('acr_values') ?? '').split(' ').find((v) => v.startsWith('idp:') && v.length > 4)
      return {
        client: { clientId, clientName: clientName ?? clientId },
        loginHint: params.get('login_hint') ?? undefined,
        formActionOrigins: [new URL(target.redirectUri).origin],
        providers: { identityProviderRestrictions, enableLocalLogin, idp: idp?.slice(4) },
        reauthentication: reauthenticationOf(params),
      }
    },
  }
}

const spentUri = () => new OAuthError('invalid_request_uri', 'request_uri has expired or has been used')
