// The authorization endpoint's consent screen: the shared decision screen (OIDC Core §3.1.2.4).
import type { DecisionView } from '../../interaction/decision.js'
import { renderDecision } from '../../pages/decision.js'
import type { Page } from '../../pages/html.js'

export interface ConsentContext {
  action: string
  csrf: string
  switchAccountHref: string
}

export function renderConsent(view: DecisionView, ctx: ConsentContext, unanswered = false): Page {
  return {
    status: unanswered ? 400 : 200,
    title: 'Allow access',
    body: renderDecision(view, {
      action: ctx.action,
      csrf: ctx.csrf,
      switchAccountHref: ctx.switchAccountHref,
      heading: `${view.clientName} wants to access your account`,
    }),
  }
}
