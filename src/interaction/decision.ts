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
  /** Further facts worth a glance (identity provider, tenant), label and value. */
  details: Array<{ label: string; value: string }>
  /** The primary action's label ("Approve", "Allow"); the secondary one is always "Deny". */
  approveLabel: string
  /**
   * Offer "remember this decision" (consent flows: ConsentService.grant(…, remember)). CIBA's
   * approval is per request (the request is the consent) and does not offer it.
   */
  offerRemember: boolean
}

export interface DecisionInput {
  client: { clientId: string; clientName?: string | undefined }
  username: string
  scopes: readonly string[]
  bindingMessage?: string | undefined
  details?: Array<{ label: string; value: string | undefined }>
  approveLabel?: string
  offerRemember?: boolean
}

export function decisionView(catalogue: Pick<ResourceCatalogue, 'apiScopes' | 'identityResources'>, input: DecisionInput): DecisionView {
  return {
    clientName: input.client.clientName ?? input.client.clientId,
    username: input.username,
    scopes: describeScopes(catalogue, input.scopes),
    bindingMessage: input.bindingMessage,
    details: (input.details ?? []).filter((d): d is { label: string; value: string } => d.value !== undefined && d.value !== ''),
    approveLabel: input.approveLabel ?? 'Approve',
    offerRemember: input.offerRemember ?? false,
  }
}
