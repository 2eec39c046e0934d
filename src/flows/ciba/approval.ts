// The person's side of CIBA (Core §7.2 leaves authentication and consent to the OP), the first
// interactive flow built on the shared foundation: the sign-in session (src/interaction/session.ts),
// the sign-in page (it returns here), and the decision screen (src/interaction/decision.ts).
// CIBA's approval is a per-request decision (the request itself is the consent), so nothing is
// remembered. The decision itself (src/grants/ciba-decision.ts) is one SQL statement, valid only
// while the request is pending and unexpired. Returns page models; rendering lives in src/pages,
// HTTP in src/routes.
import type { Clock } from '../../domain/clock.js'
import type { AuditSink } from '../../observe/audit.js'
import type { CibaRequest } from '../../domain/types.js'
import { decideCibaRequest, openCibaRequest, type CibaClosed } from '../../grants/ciba-decision.js'
import { decisionView, type DecisionView } from '../../interaction/decision.js'
import type { ReturnTargetInfo } from '../../interaction/return-to.js'
import { signedInAt } from '../../interaction/identity-providers.js'
import { signInRecord } from '../../grants/sign-in-record.js'
import type { Session } from '../../interaction/session.js'
import { stepUpUrl, type LevelCheck } from '../../interaction/authentication-level.js'
import { CIBA_APPROVE_PATH } from '../../endpoints.js'
import type { CibaRequestStore } from '../../stores/ciba-requests.js'
import type { ClientStore } from '../../stores/clients.js'
import type { ResourceStore } from '../../stores/resources.js'

export type ApprovalPage =
  | CibaClosed
  /** No session: the person is sent to the sign-in page, which returns here. */
  | { kind: 'sign-in' }
  /** The session is too weak for the request (acr_values mfa/phr, requireMfa, a factor the person has): to its missing factor, which returns here. */
  | { kind: 'step-up'; location: string }
  /** A decision posted without a (live) session. */
  | { kind: 'signed-out' }
  /** Signed in as someone else than the user the request is for; the request stays pending. */
  | { kind: 'wrong-user'; username: string; clientName: string }
  /** `unanswered`: the form came back with neither Approve nor Deny. */
  | { kind: 'decision'; view: DecisionView; unanswered?: boolean }
  | { kind: 'done'; status: 'approved' | 'denied'; clientName: string }

export interface CibaApprovalDeps {
  clock: Clock
  requests: Pick<CibaRequestStore, 'findById' | 'decide'>
  clients: Pick<ClientStore, 'findById'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  audit?: AuditSink
  /** What the approver's session still needs (none when undefined). */
  levels?: LevelCheck | undefined
}

/** The longest request id accepted from a URL (ours are 32 hex characters). */
const REQUEST_ID_MAX = 100

export function requestIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= REQUEST_ID_MAX ? value : undefined
}

export interface CibaApproval {
  /** For the sign-in page: the application behind /ciba/approve?request=ID (unknown id: ignored). */
  describe(target: URL): Promise<ReturnTargetInfo | undefined>
  show(requestId: string | undefined, session: Session | undefined): Promise<ApprovalPage>
  /**
   * Approves or denies. The tokens carry the session's auth_time (the time the person signed
   * in, not the time of this click: OIDC Core §2), amr, and the provider the person signed in
   * through (or the one the request named).
   */
  decide(
    requestId: string | undefined,
    session: Session | undefined,
    decision: string | undefined,
    ctx?: {
      address?: string
      requestId?: string
    },
  ): Promise<ApprovalPage>
}

export function createCibaApproval(deps: CibaApprovalDeps): CibaApproval {
  /** The request if it can still be decided, else the page that says why not. */
  const open = (requestId: string | undefined): Promise<CibaRequest | ApprovalPage> => openCibaRequest(deps, requestId)

  async function clientName(clientId: string): Promise<string> {
    return (await deps.clients.findById(clientId))?.clientName ?? clientId
  }

  /** The page for a person with this session, before any decision. */
  async function page(req: CibaRequest, session: Session | undefined): Promise<ApprovalPage> {
    // A request naming an identity provider (acr_values idp:) is approved after a sign-in there.
    if (!session || !signedInAt(session, req.idp)) return { kind: 'sign-in' }
    const [client, catalogue] = await Promise.all([deps.clients.findById(req.clientId), deps.resources.loadCatalogue()])
    const name = client?.clientName ?? req.clientId
    if (session.subjectId !== req.subjectId) return { kind: 'wrong-user', username: session.username, clientName: name }
    const step = deps.levels ? await deps.levels.next(session, { acrValues: req.acrValues, client }) : 'none'
    if (step !== 'none') return { kind: 'step-up', location: stepUpUrl(step, `${CIBA_APPROVE_PATH}?request=${encodeURIComponent(req.id)}`) }
    return {
      kind: 'decision',
      view: decisionView(catalogue, {
        client: { clientId: req.clientId, clientName: name },
        username: session.username,
        scopes: req.requestedScopes,
        bindingMessage: req.bindingMessage,
        details: [
          { label: 'identity-provider', value: req.idp },
          { label: 'tenant', value: req.tenant },
        ],
      }),
    }
  }

  return {
    /** For the sign-in page: the application behind /ciba/approve?request=ID (unknown id: ignored). */
    async describe(target: URL): Promise<ReturnTargetInfo | undefined> {
      const id = requestIdOf(target.searchParams.get('request') ?? undefined)
      const req = id ? await deps.requests.findById(id) : undefined
      if (!req) return undefined
      const client = await deps.clients.findById(req.clientId)
      return {
        client: { clientId: req.clientId, clientName: await clientName(req.clientId) },
        // The sign-in for the approval goes to the provider the request named (acr_values idp:).
        providers: client && {
          identityProviderRestrictions: client.identityProviderRestrictions,
          enableLocalLogin: client.enableLocalLogin,
          idp: req.idp,
        },
      }
    },

    async show(requestId: string | undefined, session: Session | undefined): Promise<ApprovalPage> {
      const req = await open(requestId)
      return 'id' in req ? page(req, session) : req
    },

    /**
     * Approves or denies. The tokens carry the session's auth_time: the time the person signed
     * in, not the time of this click (OIDC Core §2).
     */
    async decide(
      requestId: string | undefined,
      session: Session | undefined,
      decision: string | undefined,
      ctx?: { address?: string; requestId?: string },
    ): Promise<ApprovalPage> {
      const req = await open(requestId)
      if (!('id' in req)) return req
      if (!session) return { kind: 'signed-out' }
      const shown = await page(req, session)
      if (shown.kind !== 'decision') return shown
      if (decision !== 'approve' && decision !== 'deny') return { ...shown, unanswered: true }
      const decided = await decideCibaRequest(deps, req, decision, {
        signIn: signInRecord(session, req.idp),
        address: ctx?.address,
        requestId: ctx?.requestId,
      })
      if (decided.kind !== 'done') return decided
      return { kind: 'done', status: decided.request.status as 'approved' | 'denied', clientName: shown.view.clientName }
    },
  }
}
