// The decision screen's model, the same for every flow in which a person decides (CIBA approval
// now; the authorization endpoint's consent and the device page next): which application asks,
// what it will be able to do (each scope as describeScopes tells it, never a raw name when the
// seed or the standard texts have better), the binding message to compare where there is one,
// and who is signed in. Rendered by src/pages/decision.ts.
import type { ResourceCatalogue } from '../stores/resources.js'
import { describeScopes, type ScopeDescription } from './scope-descriptions.js'

export interface DecisionView {
  clientName: string
  /** The signed-in person's username. */
  username: string
  scopes: ScopeDescription[]
  /** CIBA §7.1 binding_message: the person compares it with what the asking device shows. */
  bindingMessage: string | undefined
  /** Further facts worth a glance (identity provider, tenant), which and its value. */
  details: Array<{ label: DetailLabel; value: string }>
  /** The primary action ("Approve", "Allow"); the secondary one is always "Deny". */
  approveAction: ApproveAction
  /**
   * Offer "remember this decision" (consent flows: ConsentService.grant(…, remember)). CIBA's
   * approval is per request (the request is the consent) and does not offer it.
   */
  offerRemember: boolean
  /**
   * A client nobody configured (Client.selfRegistered): the page names it as not verified by the
   * operator, with the host a person can judge it by. Undefined: the operator's own client.
   */
  unverified?: UnverifiedClient | undefined
}

/**
 * How a self-registered client is shown: the host of its client id (a metadata document) or of
 * the redirect URI the answer goes to (a registered client), so that a person can tell who asks.
 */
export interface UnverifiedClient {
  kind: 'registration' | 'metadata-document'
  host: string
}

/** The host a person judges a self-registered client by; undefined for the operator's own clients. */
export function unverifiedClient(
  client: { clientId: string; selfRegistered?: 'registration' | 'metadata-document' | undefined },
  redirectUri: string,
): UnverifiedClient | undefined {
  if (client.selfRegistered === undefined) return undefined
  const url = new URL(client.selfRegistered === 'metadata-document' ? client.clientId : redirectUri)
  // A native app's private-use scheme (com.example.app:/cb) has no host: its scheme names it.
  return { kind: client.selfRegistered, host: url.host || url.protocol.replace(/:$/, '') }
}

/** The facts a decision screen may show; the page words them in the person's language. */
export type DetailLabel = 'identity-provider' | 'tenant'
export type ApproveAction = 'approve' | 'allow'

export interface DecisionInput {
  client: { clientId: string; clientName?: string | undefined }
  username: string
  scopes: readonly string[]
  bindingMessage?: string | undefined
  details?: Array<{ label: DetailLabel; value: string | undefined }>
  approveAction?: ApproveAction
  offerRemember?: boolean
  unverified?: UnverifiedClient | undefined
}

export function decisionView(catalogue: Pick<ResourceCatalogue, 'apiScopes' | 'identityResources'>, input: DecisionInput): DecisionView {
  return {
    clientName: input.client.clientName ?? input.client.clientId,
    username: input.username,
    scopes: describeScopes(catalogue, input.scopes),
    bindingMessage: input.bindingMessage,
    details: (input.details ?? []).filter((d): d is { label: DetailLabel; value: string } => d.value !== undefined && d.value !== ''),
    approveAction: input.approveAction ?? 'approve',
    offerRemember: input.offerRemember ?? false,
    ...(input.unverified ? { unverified: input.unverified } : {}),
  }
}
