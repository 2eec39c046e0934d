// TRUST_PROXY: behind a reverse proxy the client address comes from X-Forwarded-For and the scheme
// from X-Forwarded-Proto; without it, forged headers are ignored. With a list of proxy addresses or
// networks, only a request from one of them has them believed; anyone else's are ignored.
// test/e2e/reverse-proxy.test.ts runs the server behind real proxies.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createTestApp } from '../helpers/app.js'

/** The address the server logged for each request from one of `peers` carrying X-Forwarded-For. */
async function addresses(trustProxy: string, peers: string[]): Promise<unknown[]> {
  const authz = await createTestApp({ env: { TRUST_PROXY: trustProxy } })
  try {
    const out = []
    for (const peer of peers) {
      authz.logs.length = 0
      const res = await authz.app.inject({
        method: 'GET',
        url: '/.well-known/openid-configuration',
        remoteAddress: peer,
        headers: { 'x-forwarded-for': '203.0.113.7' },
      })
      expect(res.statusCode).toBe(200)
      const incoming = authz.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'incoming request')
      out.push(incoming?.req?.remoteAddress)
    }
    return out
  } finally {
    await authz.close()
  }
}

describe('TRUST_PROXY', () => {
  it('takes the client address from X-Forwarded-For when true', async () => {
    expect(await addresses('true', ['10.0.0.5'])).toEqual(['203.0.113.7'])
  })
  it('ignores X-Forwarded-For when false', async () => {
    expect(await addresses('false', ['10.0.0.5'])).toEqual(['10.0.0.5'])
  })
  it('with proxy addresses and networks, believes X-Forwarded-For only from them', async () => {
    const peers = ['10.1.2.3', '192.0.2.10', '198.51.100.20', '::1', '2001:db8::5']
    expect(await addresses('10.0.0.0/8, 192.0.2.10,loopback', peers)).toEqual([
      '203.0.113.7',
      '203.0.113.7',
      '198.51.100.20',
      '203.0.113.7',
      '2001:db8::5',
    ])
  })
  it('believes X-Forwarded-Proto only from a listed proxy: https there gives the __Host- cookies, Secure', async () => {
    // An http issuer, so that the scheme of the request alone decides (an https issuer always gets them).
    const authz = await createTestApp({ env: { ISSUER: 'http://authz.test', TRUST_PROXY: '10.0.0.0/8' } })
    try {
      const cookiesFor = async (peer: string) => {
        const res = await authz.app.inject({
          method: 'GET',
          url: '/account/sign-in',
          remoteAddress: peer,
          headers: { 'x-forwarded-proto': 'https' },
        })
        expect(res.statusCode).toBe(200)
        return res.cookies.map((c) => ({ name: c.name, secure: c.secure === true }))
      }
      expect(await cookiesFor('10.1.2.3')).toEqual([{ name: '__Host-authz-csrf', secure: true }])
      expect(await cookiesFor('198.51.100.20')).toEqual([{ name: 'authz-csrf', secure: false }])
    } finally {
      await authz.close()
    }
  })
  it('refuses anything else, naming the variable', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy).toEqual(['10.0.0.0/8'])
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({}).trustProxy).toBe(false)
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.300', 'example.com', '10.0.0.1,,10.0.0.2', '::1/129', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError)
      try {
        loadConfig({ TRUST_PROXY: bad })
      } catch (err) {
        expect((err as ConfigError).problems).toEqual([
          `TRUST_PROXY must be true, false, or a comma-separated list of proxy addresses and networks (10.0.0.0/8, ::1, loopback), got ${JSON.stringify(bad)}`,
        ])
      }
    }
  })
})
