// Sign-in through an upstream OpenID Connect provider (OpenID Connect Core §3.1, as its client,
// through openid-client): authorization code with PKCE S256 (RFC 7636), state and nonce kept
// server-side and bound to the browser that started the sign-in, the ID token validated
// (signature from the upstream's JWKS, iss, aud, exp, nonce), the `iss` response parameter
// checked when the upstream sends it (RFC 9207 §2.4, against mix-up), each state usable once.
// A failure never starts a session: the application hears of it (access_denied when the person
// cancelled, temporarily_unavailable when the upstream failed: RFC 6749 §4.1.2.1) where its flow
// has a safe way to tell it, and the person gets a page naming the provider otherwise.
import * as oidc from 'openid-client'
import type { Clock } from '../../domain/clock.js'
import type { IdentityProvider } from '../../domain/types.js'
import { FEDERATION_SIGNIN_PATH, federationPath } from '../../endpoints.js'
import { mayUse } from '../../interaction/identity-providers.js'
import type { ErrorResponse, ReturnTarget, ReturnTargets, SignInError } from '../../interaction/return-to.js'
import type { Session, SessionService } from '../../interaction/session.js'
import type { AuditSink } from '../../observe/audit.js'
import type { FederatedIdentityStore } from '../../stores/federated-identities.js'
import type { IdentityProviderStore } from '../../stores/identity-providers.js'
import type { Accounts } from './accounts.js'
import { UpstreamUnavailable, type Upstreams } from './upstream.js'

/** Seconds a person has to sign in upstream and come back. */
export const FEDERATION_REQUEST_LIFETIME = 600

export type FailureReason =
  | 'unknown'
  | 'not_allowed'
  | 'disabled'
  | 'invalid_state'
  | 'invalid_response'
  | 'cancelled'
  | 'upstream_error'
  | 'unavailable'
  | 'account_disabled'

/** What the application is told for each failure, where it can be (undefined: only the person, by a page). */
const APP_ERROR: Partial<Record<FailureReason, SignInError>> = {
  cancelled: 'access_denied',
  account_disabled: 'access_denied',
  upstream_error: 'temporarily_unavailable',
  unavailable: 'temporarily_unavailable',
}

/** RFC 6749 §5.2 error_description: a fixed sentence per failure. */
const APP_DESCRIPTION: Partial<Record<FailureReason, string>> = {
  cancelled: 'the user did not sign in at the identity provider',
  account_disabled: 'the user may not sign in',
  upstream_error: 'the identity provider could not complete the sign-in',
  unavailable: 'the identity provider could not complete the sign-in',
}

export type Failure = { kind: 'failed'; reason: FailureReason; provider: string | undefined; app: ErrorResponse | undefined }
export type ChallengeOutcome = { kind: 'redirect'; location: string } | Failure
export type CallbackOutcome = { kind: 'signed-in'; handle: string; session: Session; location: string; provider: string } | Failure

export interface FederationDeps {
  issuer: string
  clock: Clock
  providers: IdentityProviderStore
  store: FederatedIdentityStore
  targets: ReturnTargets
  sessions: SessionService
  upstreams: Upstreams
  accounts: Accounts
  audit: AuditSink
  /** Where a person lands without a (valid) return target. */
  accountPath: string
}

export interface RequestContext {
  /** The browser's binding cookie (src/http/page-kit.ts browserBinding). */
  browser: string | undefined
  address: string
  requestId: string
  /** The browser's User-Agent, kept with the session it signs in to. */
  userAgent?: string | undefined
}

export function createFederationService(deps: FederationDeps) {
  const { clock, audit } = deps
  const redirectUri = (scheme: string) => `${deps.issuer}${federationPath(FEDERATION_SIGNIN_PATH, scheme)}`

  async function fail(
    reason: FailureReason,
    scheme: string,
    p: IdentityProvider | undefined,
    target: ReturnTarget | undefined,
    ctx: RequestContext,
  ): Promise<Failure> {
    audit.emit({
      event: 'federation.failed',
      reason,
      idp: scheme,
      clientId: target?.client?.clientId,
      address: ctx.address,
      requestId: ctx.requestId,
    })
    const error = APP_ERROR[reason]
    const app = error && target ? await target.fail(error, APP_DESCRIPTION[reason] ?? 'the sign-in failed') : undefined
    return { kind: 'failed', reason, provider: p?.displayName, app }
  }

  /** The provider of `scheme` if this sign-in may use it, or the failure saying why not. */
  async function usable(scheme: string, target: ReturnTarget | undefined, ctx: RequestContext) {
    const p = await deps.providers.findByScheme(scheme)
    if (!p) return { failure: await fail('unknown', scheme, p, undefined, ctx) }
    if (!p.enabled) return { failure: await fail('disabled', scheme, p, target, ctx) }
    if (!mayUse(target?.providers, p)) return { failure: await fail('not_allowed', scheme, p, undefined, ctx) }
    return { provider: p }
  }

  async function configuration(p: IdentityProvider) {
    try {
      return await deps.upstreams.configuration(p)
    } catch (err) {
      if (err instanceof UpstreamUnavailable) return undefined
      throw err
    }
  }

  return {
    /** GET /federation/{scheme}/challenge?return_to=…: where to send the browser upstream. */
    async challenge(scheme: string, rawReturnTo: unknown, loginHint: string | undefined, browser: string, ctx: RequestContext) {
      const target = await deps.targets.resolve(rawReturnTo)
      const { provider: p, failure } = await usable(scheme, target, ctx)
      if (!p) return failure
      const config = await configuration(p)
      if (!config) return fail('unavailable', scheme, p, target, ctx)
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const codeVerifier = oidc.randomPKCECodeVerifier()
      const now = clock.now()
      await deps.store.saveRequest(state, browser, {
        scheme,
        nonce,
        codeVerifier,
        returnTo: target?.location,
        createdAt: now,
        expiresAt: now + FEDERATION_REQUEST_LIFETIME * 1000,
      })
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri(scheme),
        scope: p.scope,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        ...(loginHint ? { login_hint: loginHint } : {}),
      })
      return { kind: 'redirect', location: url.href } satisfies ChallengeOutcome
    },

    /** GET /federation/{scheme}/signin?…: the upstream's answer; a session, or a failure. */
    async callback(scheme: string, query: string, previousHandle: string | undefined, ctx: RequestContext): Promise<CallbackOutcome> {
      const params = new URLSearchParams(query)
      const state = params.get('state')
      const now = clock.now()
      const request = state && ctx.browser ? await deps.store.consumeRequest(scheme, state, ctx.browser, now) : undefined
      const known = await deps.providers.findByScheme(scheme)
      if (!request || !state) return fail('invalid_state', scheme, known, undefined, ctx)
      const target = await deps.targets.resolve(request.returnTo)
      const { provider: p, failure } = await usable(scheme, target, ctx)
      if (!p) return failure
      const error = params.get('error')
      if (error !== null) return fail(error === 'access_denied' ? 'cancelled' : 'upstream_error', scheme, p, target, ctx)
      const config = await configuration(p)
      if (!config) return fail('unavailable', scheme, p, target, ctx)
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>
      try {
        tokens = await oidc.authorizationCodeGrant(config, new URL(`${redirectUri(scheme)}?${query}`), {
          pkceCodeVerifier: request.codeVerifier,
          expectedState: state,
          expectedNonce: request.nonce,
          idTokenExpected: true,
        })
      } catch (err) {
        return fail(classify(err), scheme, p, target, ctx)
      }
      const claims = tokens.claims()
      const idToken = tokens.id_token
      if (!claims || !idToken) return fail('invalid_response', scheme, p, target, ctx)
      const account = await deps.accounts.resolve(p, claims.sub, claims, now)
      if (!account?.user.enabled) return fail('account_disabled', scheme, p, target, ctx)
      const { user } = account
      const amr =
        Array.isArray(claims.amr) && claims.amr.length > 0 && claims.amr.every((v) => typeof v === 'string') ? claims.amr : ['external']
      const sid = typeof claims.sid === 'string' ? claims.sid : undefined
      const { handle, session } = await deps.sessions.start(previousHandle, {
        subjectId: user.subjectId,
        username: user.username,
        amr,
        idp: scheme,
        upstream: { sub: claims.sub, sid, idToken },
        userAgent: ctx.userAgent,
      })
      if (account.how !== 'found') audit.emit({ event: 'federation.linked', idp: scheme, subject: user.subjectId, reason: account.how })
      audit.emit({
        event: 'federation.signed_in',
        idp: scheme,
        subject: user.subjectId,
        clientId: target?.client?.clientId,
        address: ctx.address,
        requestId: ctx.requestId,
      })
      return { kind: 'signed-in', handle, session, location: target?.location ?? deps.accountPath, provider: p.displayName }
    },
  }
}

export type FederationService = ReturnType<typeof createFederationService>

/** What a failed code exchange says about the upstream (openid-client's errors). */
function classify(err: unknown): FailureReason {
  if (err instanceof oidc.ResponseBodyError) return 'upstream_error' // the token endpoint answered an OAuth error
  if (err instanceof oidc.AuthorizationResponseError) return err.error === 'access_denied' ? 'cancelled' : 'upstream_error'
  if (err instanceof oidc.ClientError) {
    const unavailable = ['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON']
    return err.code !== undefined && unavailable.includes(err.code) ? 'unavailable' : 'invalid_response'
  }
  return 'unavailable' // the network: refused, reset, unresolvable
}
