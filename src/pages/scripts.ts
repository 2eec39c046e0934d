// The only scripts our pages load, from our own origin at content-addressed paths (cacheable for
// good; the pages' CSP says script-src 'self' on the pages that use them, and nothing inline):
// @simplewebauthn/browser's bundle, which turns WebAuthn's JSON options into
// navigator.credentials calls and their answers back into JSON, and the few lines below that wire
// it to the passkey forms. Every passkey form works as a plain form: the script runs the ceremony,
// puts the browser's answer into its `webauthn_response` field and submits it; without JavaScript
// the form posts without one and the server answers with a page that says what is missing.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export interface ScriptAsset {
  readonly path: string
  readonly js: string
}

function asset(name: string, js: string): ScriptAsset {
  const hash = createHash('sha256').update(js).digest('base64url').slice(0, 16)
  return { path: `/assets/${name}-${hash}.js`, js }
}

/** The library's minified UMD bundle (it defines the global SimpleWebAuthnBrowser). */
function webauthnBundle(): string {
  // The package exports only its entry point; the bundle sits beside it in dist/.
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser')
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8')
}

/**
 * Forms marked data-passkey="sign-in" or "register" carry the ceremony's options as JSON in
 * data-options. A sign-in form marked data-autofill also offers passkeys in the username field's
 * autofill (conditional mediation, WebAuthn §5.1.4.1). A failure is shown in the form's
 * [data-passkey-error] box (role=alert), in the words of its data-text.
 */
const PASSKEY_FORMS = `(function () {
  'use strict'
  var lib = window.SimpleWebAuthnBrowser
  if (!lib || !lib.browserSupportsWebAuthn()) return
  function fail(form, err) {
    var box = form.querySelector('[data-passkey-error]')
    if (!box || (err && err.name === 'AbortError')) return
    box.querySelector('p').textContent = box.getAttribute('data-text')
    box.hidden = false
    var button = form.querySelector('button')
    if (button) button.focus()
  }
  function send(form, answer) {
    form.querySelector('input[name=webauthn_response]').value = JSON.stringify(answer)
    form.submit()
  }
  function run(form, autofill) {
    var options = JSON.parse(form.getAttribute('data-options'))
    var ceremony = form.getAttribute('data-passkey') === 'register'
      ? lib.startRegistration({ optionsJSON: options })
      : lib.startAuthentication({ optionsJSON: options, useBrowserAutofill: autofill })
    return ceremony.then(function (answer) { send(form, answer) })
  }
  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault()
      run(form, false).catch(function (err) { fail(form, err) })
    })
    if (form.hasAttribute('data-autofill')) {
      lib.browserSupportsWebAuthnAutofill().then(function (yes) {
        if (yes) run(form, true).catch(function () {})
      })
    }
  })
})()
`

export interface PageScripts {
  /** Both, in the order a page loads them. */
  readonly passkeys: readonly ScriptAsset[]
}

export function createPageScripts(): PageScripts {
  return { passkeys: [asset('webauthn', webauthnBundle()), asset('passkeys', PASSKEY_FORMS)] }
}
