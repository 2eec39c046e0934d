// The decision screen says each thing once: a scope's label, and its sentence only when it adds
// something; the standard scopes' texts in the reader's language, the seed's texts as given.
import { describe, expect, it } from 'vitest'
import { decisionView } from '../../src/interaction/decision.js'
import { renderDecision } from '../../src/pages/decision.js'
import { LOCALES, messagesFor } from '../../src/pages/messages/index.js'
import type { ApiScope, IdentityResource } from '../../src/domain/types.js'

const STANDARD = ['openid', 'profile', 'email', 'address', 'phone', 'offline_access']
const form = { action: '/x', csrf: 'c', switchAccountHref: '/account/sign-in' }

function catalogue(
  identity: Array<Partial<IdentityResource> & { name: string }> = [],
  api: Array<Partial<ApiScope> & { name: string }> = [],
) {
  return {
    identityResources: new Map(identity.map((r) => [r.name, r as IdentityResource])),
    apiScopes: new Map(api.map((s) => [s.name, s as ApiScope])),
  }
}

/** Each scope line as [label, sentence or undefined]. */
function lines(body: string): Array<[string, string | undefined]> {
  return [...body.matchAll(/<li data-scope="[^"]*"><strong>([^<]*)<\/strong>(?:<span>([^<]*)<\/span>)?<\/li>/g)].map((m) => [m[1]!, m[2]])
}

describe('scope lines', () => {
  for (const locale of LOCALES) {
    it(`${locale}: every standard scope has a label and a sentence that does not repeat it`, () => {
      const view = decisionView(catalogue(), { client: { clientId: 'app' }, username: 'alice', scopes: STANDARD })
      const shown = lines(renderDecision(view, form, messagesFor(locale)).value)
      expect(shown).toHaveLength(STANDARD.length)
      for (const [label, about] of shown) {
        expect(about, label).toBeDefined()
        expect(about!.toLowerCase(), label).not.toContain(label.toLowerCase())
      }
    })
  }

  it('shows "Stay signed in" once, with what it means', () => {
    const view = decisionView(catalogue(), { client: { clientId: 'app' }, username: 'alice', scopes: ['offline_access'] })
    expect(lines(renderDecision(view, form, messagesFor('en')).value)).toEqual([
      ['Stay signed in', 'Access when you are not using the app'],
    ])
  })

  it("leaves out a seeded description that only repeats the label, and keeps the seed's words otherwise", () => {
    const view = decisionView(
      catalogue(
        [{ name: 'address', displayName: 'Postal address', description: 'postal address.' }],
        [
          { name: 'orders.read', displayName: 'Read your orders', description: 'Read your orders' },
          { name: 'orders.write', description: 'Place orders for you' },
        ],
      ),
      { client: { clientId: 'app' }, username: 'alice', scopes: ['address', 'orders.read', 'orders.write', 'email'] },
    )
    expect(lines(renderDecision(view, form, messagesFor('de')).value)).toEqual([
      ['Postal address', undefined],
      ['Read your orders', undefined],
      ['orders.write', 'Place orders for you'],
      ['Ihre E-Mail-Adresse', 'Auch, ob sie bestätigt ist'],
    ])
  })
})
