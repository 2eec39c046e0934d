// signCompact (src/tokens/jwt.ts) remembers encoded headers: the bytes stay exactly JSON.stringify's.
import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeCompact, signCompact, verifySignature } from '../../src/tokens/jwt.js'

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const headerOf = (jwt: string) => Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8')

describe('signCompact', () => {
  it('encodes every header exactly as JSON.stringify does, remembered or not', () => {
    const headers = [
      { alg: 'ES256', kid: 'k1', typ: 'at+jwt' },
      { alg: 'ES256', kid: 'k1', typ: 'at+jwt' }, // remembered
      { alg: 'ES256', kid: 'k1', typ: 'JWT' },
      { alg: 'ES256', kid: 'k2', typ: 'at+jwt' },
      { typ: 'at+jwt', alg: 'ES256', kid: 'k1' }, // another order: other bytes
      { alg: 'ES256', kid: 'k1', typ: 'at+jwt', cty: 'x' },
      { alg: 'ES256', kid: 'k1', typ: undefined },
      { alg: 'ES256', kid: 'k1' },
    ] as const
    for (const h of headers) {
      const jwt = signCompact(h, { sub: 's' }, privateKey)
      expect(headerOf(jwt)).toBe(JSON.stringify(h))
      const d = decodeCompact(jwt)
      expect(verifySignature('ES256', publicKey, d.signingInput, d.signature)).toBe(true)
      expect(d.payload).toEqual({ sub: 's' })
    }
  })
})
