// What every error answer must look like (RFC 6749 §5.2, ARCHITECTURE.md "Wire rules"): OAuth endpoints
// answer JSON {error, error_description} with no-store, both members within the §5.2 charset
// (%x20-21 / %x23-5B / %x5D-7E: printable ASCII without `"` and `\`), never echoing input.
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'

/** RFC 6749 §5.2: error and error_description may hold only these characters. */
export const RFC6749_ERROR_CHARSET = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/

/** An error body in OAuth shape: error, and error_description when present, both within the charset. */
export function expectOAuthErrorBody(body: unknown, where: string, marker?: string): void {
  expect(body, where).toBeTypeOf('object')
  const b = body as Record<string, unknown>
  expect(
    Object.keys(b).filter((k) => k !== 'error' && k !== 'error_description'),
    where,
  ).toEqual([])
  expect(b.error, where).toMatch(/^[a-z_]+$/)
  if (b.error_description === undefined) return
  expect(b.error_description, where).toBeTypeOf('string')
  expect(b.error_description, where).toMatch(RFC6749_ERROR_CHARSET)
  if (marker !== undefined && typeof b.error_description === 'string') {
    expect(b.error_description.toLowerCase(), where).not.toContain(marker.toLowerCase())
  }
}

/** A 4xx answer of an OAuth endpoint: JSON in OAuth shape with no-store and no-cache. */
export function expectOAuthError(res: LightMyRequestResponse, where: string, marker?: string): void {
  expect(res.statusCode, `${where}: ${res.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400)
  expect(res.statusCode, `${where}: ${res.body.slice(0, 200)}`).toBeLessThan(500)
  expect(res.headers['content-type'], where).toBe('application/json; charset=utf-8')
  expect(res.headers['cache-control'], where).toBe('no-store')
  expect(res.headers.pragma, where).toBe('no-cache')
  expectOAuthErrorBody(res.json(), where, marker)
}

/**
 * Any answer of any route to bad input: never 5xx; a success, an HTML page (the pages a person
 * uses; what they typed comes back only escaped, in a form field or a link), or an OAuth error as
 * above, whose description never echoes the marker.
 */
export function expectNoServerError(res: LightMyRequestResponse, where: string, marker?: string): void {
  expect(res.statusCode, `${where}: ${res.body.slice(0, 200)}`).toBeLessThan(500)
  if (res.statusCode < 400) return
  if (String(res.headers['content-type']).startsWith('text/html')) {
    expect(res.headers['cache-control'], where).toBe('no-store')
    if (marker !== undefined) expectOnlyEscapedInAttributes(res.body, where, marker)
    return
  }
  expectOAuthError(res, where, marker)
}

/**
 * A page may give back what the person typed (the sign-in form keeps the username) or link back
 * to the page that showed the form, escaped: the marker may stand only inside a quoted value or
 * href attribute, never in text or markup, and nothing the request sent may become a tag.
 */
function expectOnlyEscapedInAttributes(body: string, where: string, marker: string): void {
  expect(body, where).not.toMatch(/<script/i)
  const lower = body.toLowerCase()
  for (let i = lower.indexOf(marker); i !== -1; i = lower.indexOf(marker, i + 1)) {
    const attr = body.slice(0, i).match(/ (value|href)="[^"<>]*$/)
    expect(attr, `${where}: ${body.slice(Math.max(0, i - 80), i + 20)}`).not.toBeNull()
  }
}
