// The decision on a CIBA request (OpenID CIBA Core §7.2 leaves how the user consents to the OP),
// one rule for every way of deciding: the approval page (src/flows/ciba/approval.ts) and whoever
// answers for the person. Only a pending, unexpired request can be decided, in one SQL statement,
// so that of two decisions racing (or a decision racing expiry) exactly one holds. An approval
// grants every scope the request asked for; the client's next poll gets the tokens (§11), a
// denial gets access_denied.
import type { Clock } from '../domain/clock.js'
import type { CibaRequest, SignInRecord } from '../domain/types.js'
import type { AuditSink } from '../observe/audit.js'
import type { CibaRequestStore } from '../stores/ciba-requests.js'

/** OpenID CIBA Core 1.0 §10.1: the grant type of the token request. */
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba'

/** Why a request cannot be decided: no such request, it has expired, or it was decided already. */
export type CibaClosed = { kind: 'unknown' } | { kind: 'expired' } | { kind: 'decided'; status: 'approved' | 'denied' }

export interface CibaDecisionDeps {
  clock: Clock
  requests: Pick<CibaRequestStore, 'findById' | 'decide'>
  audit?: AuditSink | undefined
}

/** The request if it can still be decided, else why not. */
export async function openCibaRequest(
  deps: Pick<CibaDecisionDeps, 'clock' | 'requests'>,
  requestId: string | undefined,
): Promise<CibaRequest | CibaClosed> {
  const req = requestId ? await deps.requests.findById(requestId) : undefined
  if (!req) return { kind: 'unknown' }
  if (req.status !== 'pending') return { kind: 'decided', status: req.status }
  if (req.expiresAt <= deps.clock.now()) return { kind: 'expired' }
  return req
}

/**
 * Approves or denies `req`, opened by openCibaRequest. `signIn` is how the approver signed in: the
 * tokens carry its auth_time (OIDC Core §2), amr and idp; an operator's approval has only the
 * time. Answers the decided request, or the request's state now when another decision or its
 * expiry came first.
 */
export async function decideCibaRequest(
  deps: CibaDecisionDeps,
  req: CibaRequest,
  decision: 'approve' | 'deny',
  opts: {
    signIn: Pick<SignInRecord, 'authTime'> & Partial<SignInRecord>
    address?: string | undefined
    requestId?: string | undefined
  },
): Promise<{ kind: 'done'; request: CibaRequest } | CibaClosed> {
  const decided = await deps.requests.decide(
    req.id,
    decision === 'approve' ? { status: 'approved', approvedScopes: req.requestedScopes, ...opts.signIn } : { status: 'denied' },
    deps.clock.now(),
  )
  // Lost a race with another decision or with expiry: say what the request's state is now.
  if (!decided) return (await openCibaRequest(deps, req.id)) as CibaClosed
  deps.audit?.emit({
    event: decided.status === 'approved' ? 'ciba.approved' : 'ciba.denied',
    clientId: req.clientId,
    subject: req.subjectId,
    grantType: CIBA_GRANT,
    address: opts.address,
    requestId: opts.requestId,
    cibaRequestId: req.id,
    ...(decided.status === 'approved' ? { scope: req.requestedScopes.join(' ') } : { reason: 'user_denied' }),
  })
  return { kind: 'done', request: decided }
}
