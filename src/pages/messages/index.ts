// The languages the pages speak, and the choice of one per request. A language is one catalogue
// file beside en.ts (the type checker holds it to English's keys; test/pages/messages.unit.test.ts
// to its placeholders), named once in CATALOGUES below.
import { escapeHtml, SafeHtml } from '../html.js'
import { de } from './de.js'
import { en, type Catalogue, type MessageKey } from './en.js'

export type { MessageKey } from './en.js'

/** Every language, by its BCP 47 tag (RFC 5646, lower case); English first, the default. */
export const CATALOGUES = { en, de } as const satisfies Record<string, Catalogue>

export type Locale = keyof typeof CATALOGUES
export const LOCALES = Object.keys(CATALOGUES) as Locale[]
export const DEFAULT_LOCALE: Locale = 'en'

/** The placeholder names of a text: `'{client} asks'` → `'client'`. */
type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never
/** A key's values argument: none for a text without placeholders, else one value per placeholder. */
type Values<K extends MessageKey, V> = [Placeholders<(typeof en)[K]>] extends [never] ? [] : [Record<Placeholders<(typeof en)[K]>, V>]

/** The keys of the texts without placeholders. */
export type PlainKey = { [K in MessageKey]: [Placeholders<(typeof en)[K]>] extends [never] ? K : never }[MessageKey]

/** One language's texts, as a page renders them. */
export interface Messages {
  readonly locale: Locale
  /** The text with its placeholders filled in; plain text, escaped where it is interpolated. */
  text<K extends MessageKey>(key: K, ...values: Values<K, string | number>): string
  /**
   * The text as HTML: the catalogue's words escaped, values escaped unless they are SafeHtml
   * (markup the page built, such as `<strong>` around a name). Nothing of a catalogue is ever raw.
   */
  html<K extends MessageKey>(key: K, ...values: Values<K, string | number | SafeHtml>): SafeHtml
}

const PLACEHOLDER = /\{([A-Za-z]+)\}/g

export function messagesFor(locale: Locale): Messages {
  const catalogue: Catalogue = CATALOGUES[locale]
  const fill = (
    key: MessageKey,
    values: Record<string, unknown> | undefined,
    each: (v: unknown) => string,
    literal: (s: string) => string,
  ) => {
    const text = catalogue[key]
    let out = ''
    let last = 0
    for (const m of text.matchAll(PLACEHOLDER)) {
      out += literal(text.slice(last, m.index)) + each(values?.[m[1]!])
      last = m.index + m[0].length
    }
    return out + literal(text.slice(last))
  }
  return {
    locale,
    text: (key, ...values) => fill(key, values[0], String, (s) => s),
    html: (key, ...values) => new SafeHtml(fill(key, values[0], (v) => (v instanceof SafeHtml ? v.value : escapeHtml(v)), escapeHtml)),
  }
}

/** The first of these language tags we speak: an exact match, else one by its primary language (de-CH → de). */
function firstSupported(tags: readonly string[]): Locale | undefined {
  const known = (tag: string) => ((LOCALES as readonly string[]).includes(tag) ? (tag as Locale) : undefined)
  for (const tag of tags) {
    const lower = tag.toLowerCase()
    const found = known(lower) ?? known(lower.split('-')[0]!)
    if (found) return found
  }
  return undefined
}

/** At most this many entries of either list are looked at: a long header costs nothing more. */
const MAX_TAGS = 20
const TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/

/**
 * OpenID Connect Core §3.1.2.1 ui_locales: space-separated tags in order of preference; the
 * first we speak wins.
 */
export function fromUiLocales(value: string | undefined): Locale | undefined {
  if (!value) return undefined
  return firstSupported(
    value
      .split(' ')
      .filter((t) => TAG.test(t))
      .slice(0, MAX_TAGS),
  )
}

/** RFC 9110 §12.5.4 Accept-Language: the tags by weight (q=0: not acceptable; `*`: no preference). */
export function fromAcceptLanguage(value: string | undefined): Locale | undefined {
  if (!value) return undefined
  const ranked = value
    .split(',')
    .slice(0, MAX_TAGS)
    .map((part, order) => {
      const [tag = '', ...params] = part.trim().split(';')
      const weight = params.map((p) => p.trim()).find((p) => /^q=/i.test(p))
      // A weight that is not one (q=abc) leaves the entry out rather than guessing.
      const q = weight === undefined ? 1 : /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i.test(weight) ? Number(weight.slice(2)) : 0
      return { tag: tag.trim(), q, order }
    })
    .filter((r) => r.q > 0 && TAG.test(r.tag))
    .sort((a, b) => b.q - a.q || a.order - b.order)
  return firstSupported(ranked.map((r) => r.tag))
}

/** ui_locales first (the application asked for it), then the browser's Accept-Language, then English. */
export function chooseLocale(uiLocales: string | undefined, acceptLanguage: string | undefined): Locale {
  return fromUiLocales(uiLocales) ?? fromAcceptLanguage(acceptLanguage) ?? DEFAULT_LOCALE
}
