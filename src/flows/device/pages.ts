// The device page (RFC 8628 §3.3): the code entry form, the decision screen (the shared
// component, src/pages/decision.ts) with the code to compare with the device's screen, and the
// pages that say why there is nothing to decide. Sign-in is the shared sign-in page's.
import type { DevicePage } from './verification.js'
import { formatUserCode } from './user-code.js'
import { renderDecision } from '../../pages/decision.js'
import { alertBox, html, type Page } from '../../pages/html.js'
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

const UNKNOWN = 'That code is not valid, or it belongs to a request that no longer exists. Check the code on your device and type it again.'

/** The entry form; `filled`: a code sent by a link from another site, for the person to confirm. */
function entryPage(unknown: boolean, filled?: { code: string }): Page {
  return {
    status: unknown ? 404 : 200,
    title: 'Connect a device',
    body: html`<h1>Connect a device</h1>
<p class="lead">${filled ? 'Check that this is the code your device shows, then press Continue.' : 'Type the code your TV, console or other device shows.'}</p>
${alertBox(unknown ? UNKNOWN : undefined)}
<form method="get" action="${DEVICE_PATH}">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text"${filled ? html` value="${filled.code}"` : ''} placeholder="BCDF-GHJK" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="32" required autofocus>
<div class="actions"><button class="button primary" type="submit">Continue</button></div>
</form>`,
  }
}

const startAgain = { href: DEVICE_PATH, label: 'Enter another code' }

/** Status and page for a page model ('sign-in' is a redirect, decided by the route). */
export function renderDevicePage(page: Exclude<DevicePage, { kind: 'sign-in' }>, ctx: { csrf: string }): Page {
  switch (page.kind) {
    case 'enter':
      return entryPage(page.unknown === true)
    case 'confirm':
      return entryPage(false, { code: page.userCode ?? '' })
    case 'blocked':
      return messagePage({
        status: 429,
        title: 'Too many wrong codes',
        tone: 'alert',
        text: ['Too many codes that did not match any device were typed from your network. Please wait a few minutes and try again.'],
      })
    case 'expired':
      return messagePage({
        status: 410,
        title: 'This code has expired',
        tone: 'alert',
        text: ['It can no longer be used. Start again on your device to get a new code.'],
        action: startAgain,
      })
    case 'used':
      return messagePage({
        status: 410,
        title: 'This code was already used',
        tone: 'alert',
        text: ['Someone already approved or denied this request. If that was not you, start again on your device.'],
        action: startAgain,
      })
    case 'signed-out':
      return messagePage({
        status: 401,
        title: 'Your session has ended',
        tone: 'alert',
        text: ['Your session has ended. Please sign in again to answer the request. Nothing was changed.'],
        action: { href: signInUrl(deviceReturnTarget(page.userCode, page.requestId)), label: 'Sign in' },
      })
    case 'decision':
      return {
        status: page.unanswered ? 400 : 200,
        title: 'Connect a device',
        body: renderDecision(page.view, {
          action: devicePageUrl(page.userCode),
          csrf: ctx.csrf,
          switchAccountHref: signInUrl(deviceReturnTarget(page.userCode, page.requestId)),
          heading: `Connect ${page.view.clientName} on your device?`,
          error: page.unanswered ? 'Choose Approve or Deny.' : undefined,
        }),
      }
    case 'done':
      return page.status === 'approved'
        ? messagePage({
            status: 200,
            title: 'Device connected',
            tone: 'success',
            text: [`You approved ${page.clientName}. Go back to your device: it continues by itself. You can close this page.`],
          })
        : messagePage({
            status: 200,
            title: 'Denied',
            tone: 'success',
            text: [`You denied ${page.clientName}. The device gets no access. You can close this page.`],
          })
  }
}
