// The device page (RFC 8628 §3.3): the code entry form, the decision screen (the shared
// component, src/pages/decision.ts) with the code to compare with the device's screen, and the
// pages that say why there is nothing to decide. Sign-in is the shared sign-in page's.
import type { DevicePage } from './verification.js'
import { formatUserCode } from './user-code.js'
import { renderDecision } from '../../pages/decision.js'
import { alertBox, html, type Page } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import type { Messages } from '../../pages/messages/index.js'
import { messagePage } from '../../pages/message.js'
import { signInUrl } from '../../pages/sign-in.js'
import { DEVICE_PATH } from '../../endpoints.js'

/** The device page of one code; its decision form posts to the same URL. */
export function devicePageUrl(userCode: string): string {
  return `${DEVICE_PATH}?user_code=${formatUserCode(userCode)}`
}

/**
 * The device page as the sign-in page's return target: with the id of the request the code
 * named, so the sign-in page can say which application asks (src/flows/device/verification.ts
 * describe). The device page itself reads only the code.
 */
export function deviceReturnTarget(userCode: string, requestId: string): string {
  return `${devicePageUrl(userCode)}&request=${requestId}`
}

/** The entry form; `filled`: a code sent by a link from another site, for the person to confirm. */
function entryPage(m: Messages, unknown: boolean, filled?: { code: string }): Page {
  return {
    status: unknown ? 404 : 200,
    title: m.text('device.title'),
    body: html`<h1>${m.text('device.title')}</h1>
<p class="lead">${m.text(filled ? 'device.confirm' : 'device.enter')}</p>
${alertBox(unknown ? m.text('device.unknown') : undefined)}
<form method="get" action="${DEVICE_PATH}">
<label for="user_code">${m.text('device.code')}</label>
<input id="user_code" name="user_code" type="text"${filled ? html` value="${filled.code}"` : ''} placeholder="BCDF-GHJK" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="32" required autofocus>
<div class="actions"><button class="button primary" type="submit">${m.text('common.continue')}</button></div>
</form>`,
  }
}

/** Status and page for a page model ('sign-in' is a redirect, decided by the route). */
export function renderDevicePage(page: Exclude<DevicePage, { kind: 'sign-in' | 'step-up' }>, ctx: { csrf: string }): LocalizedPage {
  return (m) => {
    const startAgain = { href: DEVICE_PATH, label: m.text('device.another') }
    switch (page.kind) {
      case 'enter':
        return entryPage(m, page.unknown === true)
      case 'confirm':
        return entryPage(m, false, { code: page.userCode ?? '' })
      case 'blocked':
        return messagePage({ status: 429, title: m.text('device.blocked.title'), tone: 'alert', text: [m.text('device.blocked.text')] })
      case 'expired':
        return messagePage({
          status: 410,
          title: m.text('device.expired.title'),
          tone: 'alert',
          text: [m.text('device.expired.text')],
          action: startAgain,
        })
      case 'used':
        return messagePage({
          status: 410,
          title: m.text('device.used.title'),
          tone: 'alert',
          text: [m.text('device.used.text')],
          action: startAgain,
        })
      case 'signed-out':
        return messagePage({
          status: 401,
          title: m.text('common.sessionEnded.title'),
          tone: 'alert',
          text: [m.text('common.sessionEnded.text')],
          action: { href: signInUrl(deviceReturnTarget(page.userCode, page.requestId)), label: m.text('common.signIn') },
        })
      case 'decision':
        return {
          status: page.unanswered ? 400 : 200,
          title: m.text('device.title'),
          body: renderDecision(
            page.view,
            {
              action: devicePageUrl(page.userCode),
              csrf: ctx.csrf,
              switchAccountHref: signInUrl(deviceReturnTarget(page.userCode, page.requestId)),
              heading: m.text('device.decision.heading', { client: page.view.clientName }),
              error: page.unanswered ? m.text('common.unanswered') : undefined,
            },
            m,
          ),
        }
      case 'done':
        return page.status === 'approved'
          ? messagePage({
              status: 200,
              title: m.text('device.approved.title'),
              tone: 'success',
              text: [m.text('device.approved.text', { client: page.clientName })],
            })
          : messagePage({
              status: 200,
              title: m.text('common.denied'),
              tone: 'success',
              text: [m.text('device.denied.text', { client: page.clientName })],
            })
    }
  }
}
