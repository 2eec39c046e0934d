// The catalogues: every language has every key of English and the same placeholders; texts are
// escaped wherever they are shown; the language is chosen from ui_locales, then Accept-Language.
import { describe, expect, it } from 'vitest'
import { html } from '../../src/pages/html.js'
import { CATALOGUES, chooseLocale, fromAcceptLanguage, fromUiLocales, LOCALES, messagesFor } from '../../src/pages/messages/index.js'

const placeholders = (text: string) => [...text.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]).sort()

describe('catalogues', () => {
  it('ship English and German', () => {
    expect(LOCALES).toEqual(['en', 'de'])
  })

  for (const locale of LOCALES) {
    it(`${locale}: every key of English, no other, with the same placeholders and no markup`, () => {
      const catalogue: Record<string, string> = CATALOGUES[locale]
      const english: Record<string, string> = CATALOGUES.en
      expect(Object.keys(catalogue).sort()).toEqual(Object.keys(english).sort())
      for (const [key, text] of Object.entries(catalogue)) {
        expect({ key, placeholders: placeholders(text) }).toEqual({ key, placeholders: placeholders(english[key]!) })
        expect({ key, text: text.trim() }).toEqual({ key, text })
        expect(text, key).not.toBe('')
        expect(text, key).not.toMatch(/[<>]/)
      }
    })
  }

  it('German differs from English where it should: no text left untranslated but names and codes', () => {
    const same = Object.entries(CATALOGUES.de).filter(([key, text]) => text === CATALOGUES.en[key as keyof typeof CATALOGUES.en])
    expect(same.map(([key]) => key)).toEqual(['device.code', 'error.details'])
  })
})

describe('messages', () => {
  it('fill placeholders as plain text, and escape text and values in HTML unless a value is markup the page built', () => {
    const de = messagesFor('de')
    expect(de.text('consent.heading', { client: 'A & <B>' })).toBe('A & <B> möchte auf Ihr Konto zugreifen')
    expect(de.html('consent.heading', { client: 'A & <B>' }).value).toBe('A &amp; &lt;B&gt; möchte auf Ihr Konto zugreifen')
    expect(messagesFor('en').html('signOut.who', { user: html`<strong>${'<bob>'}</strong>` }).value).toBe(
      'You are signed in as <strong>&lt;bob&gt;</strong>.',
    )
    expect(messagesFor('en').html('signIn.passwordHint').value).toBe(
      'Signing in with your organisation&#39;s email address? Leave the password empty.',
    )
  })
})

describe('choosing the language', () => {
  it('takes the first ui_locales tag we speak, by exact tag or primary language (OIDC Core §3.1.2.1)', () => {
    expect(fromUiLocales('fr-CA de en')).toBe('de')
    expect(fromUiLocales('de-AT')).toBe('de')
    expect(fromUiLocales('EN-gb de')).toBe('en')
    expect(fromUiLocales('fr ja')).toBeUndefined()
    expect(fromUiLocales('')).toBeUndefined()
    expect(fromUiLocales('<script> de')).toBe('de')
  })

  it('takes Accept-Language by weight, ignoring q=0, * and malformed entries (RFC 9110 §12.5.4)', () => {
    expect(fromAcceptLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de')
    expect(fromAcceptLanguage('en;q=0.5, de;q=0.9')).toBe('de')
    expect(fromAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5')).toBe('en')
    expect(fromAcceptLanguage('de;q=0, en;q=0.1')).toBe('en')
    expect(fromAcceptLanguage('*')).toBeUndefined()
    expect(fromAcceptLanguage('de;q=abc')).toBeUndefined()
    expect(fromAcceptLanguage(`${'xx,'.repeat(5000)}de`)).toBeUndefined()
  })

  it('prefers ui_locales, then Accept-Language, then English', () => {
    expect(chooseLocale('de', 'en')).toBe('de')
    expect(chooseLocale('fr', 'de')).toBe('de')
    expect(chooseLocale(undefined, undefined)).toBe('en')
    expect(chooseLocale('fr', 'ja')).toBe('en')
  })
})
