// The authorization endpoint's consent screen: the shared decision screen (OIDC Core §3.1.2.4).
import type { DecisionView } from '../../interaction/decision.js'
import { renderDecision } from '../../pages/decision.js'
import type { LocalizedPage } from '../../pages/layout.js'

export interface ConsentContext {
  action: string
  csrf: string
  switchAccountHref: string
}

export function renderConsent(view: DecisionView, ctx: ConsentContext, unanswered = false): LocalizedPage {
  return (m) => ({
    status: unanswered ? 400 : 200,
    title: m.text('consent.title'),
    body: renderDecision(
      view,
      {
        action: ctx.action,
        csrf: ctx.csrf,
        switchAccountHref: ctx.switchAccountHref,
        heading: m.text('consent.heading', { client: view.clientName }),
      },
      m,
    ),
  })
}
