import { describe, expect, it } from 'vitest'
import { parseAccept, prefersJwtIntrospection } from '../../../src/flows/introspection/routes.js'

const JWT = 'application/token-introspection+jwt'

describe('Accept negotiation for RFC 9701', () => {
  it('parses media ranges and q-values', () => {
    expect(parseAccept(`Application/JSON;q=0.5 , ${JWT};level=1;q=1, */*;q=abc,`)).toEqual([
      { type: 'application/json', q: 0.5 },
      { type: JWT, q: 1 },
      { type: '*/*', q: 0 },
    ])
  })
  it.each([
    [undefined, false],
    ['', false],
    [JWT, true],
    [JWT.toUpperCase(), true],
    [`${JWT}, application/json`, true],
    [`application/json;q=0.9, ${JWT}`, true],
    [`application/json, ${JWT};q=0.9`, false],
    [`${JWT};q=0.5, application/*;q=0.5`, true],
    [`${JWT};q=0.5, */*`, false],
    [`${JWT};q=0`, false],
    ['*/*', false],
    ['application/*', false],
    ['application/token-introspection+jwtx', false],
  ])('%s → %s', (accept, expected) => {
    expect(prefersJwtIntrospection(accept)).toBe(expected)
  })
})
