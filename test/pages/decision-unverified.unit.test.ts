// The decision screen names a client nobody configured as such, in every language: the host a
// person can judge it by (its client id's for a metadata document, its redirect URI's for a
// registered client), large, and the sentence saying nobody checked it. The operator's own
// clients carry no such note.
import { describe, expect, it } from 'vitest'
import { decisionView, unverifiedClient } from '../../src/interaction/decision.js'
import { renderDecision } from '../../src/pages/decision.js'
import { LOCALES, messagesFor } from '../../src/pages/messages/index.js'

const form = { action: '/x', csrf: 'c', switchAccountHref: '/account/sign-in' }
const catalogue = { identityResources: new Map(), apiScopes: new Map() }

function page(
  client: { clientId: string; clientName?: string; selfRegistered?: 'registration' | 'metadata-document' },
  redirectUri: string,
  locale: (typeof LOCALES)[number] = 'en',
) {
  const view = decisionView(catalogue, { client, username: 'alice', scopes: [], unverified: unverifiedClient(client, redirectUri) })
  return renderDecision(view, form, messagesFor(locale)).value
}

describe('a self-registered client on the decision screen', () => {
  it('shows the host of a metadata document client id', () => {
    const body = page(
      { clientId: 'https://agent.example.com/client.json', clientName: 'Agent', selfRegistered: 'metadata-document' },
      'http://127.0.0.1:9/cb',
    )
    expect(body).toContain('<p class="host" id="client-host">agent.example.com</p>')
    expect(body).toContain('Not verified by the operator of this server')
    expect(body).toContain('Agent describes itself at <strong>agent.example.com</strong>')
  })

  it('shows the host of a registered client redirect URI, or its private-use scheme', () => {
    expect(page({ clientId: 'c-1', clientName: 'Reg', selfRegistered: 'registration' }, 'https://app.example.net/cb')).toContain(
      'Reg registered itself and sends you back to <strong>app.example.net</strong>',
    )
    expect(page({ clientId: 'c-2', selfRegistered: 'registration' }, 'com.example.app:/cb')).toContain(
      'id="client-host">com.example.app</p>',
    )
  })

  for (const locale of LOCALES) {
    it(`${locale}: words the note`, () => {
      const body = page(
        { clientId: 'https://agent.example.com/client.json', selfRegistered: 'metadata-document' },
        'http://127.0.0.1:9/cb',
        locale,
      )
      expect(body).toMatch(/<div class="notice unverified" id="unverified" role="note">\n<p class="label">[^<]+<\/p>/)
    })
  }

  it('adds nothing for the operator own clients', () => {
    expect(page({ clientId: 'web', clientName: 'Web' }, 'https://web.example/cb')).not.toContain('unverified')
  })
})
