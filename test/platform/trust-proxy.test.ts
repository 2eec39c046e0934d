// TRUST_PROXY: behind a reverse proxy the client address comes from X-Forwarded-For; without it,
// a forged header is ignored. With a list of proxy addresses or networks, only a request from one
// of them has its X-Forwarded-For believed; anyone else's is ignored.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createTestApp } from '../helpers/app.js'

/** The address the server logged for a request from `peer` carrying X-Forwarded-For, and the scheme it saw. */
async function seenFrom(trustProxy: string, peers: string[]): Promise<Array<{ address: unknown; secure: unknown }>> {
  const authz = await createTestApp({ env: { TRUST_PROXY: trustProxy } })
  try {
    const out = []
    for (const peer of peers) {
      authz.logs.length = 0
      const res = await authz.app.inject({
        method: 'GET',
        url: '/.well-known/openid-configuration',
        remoteAddress: peer,
        headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' },
      })
      expect(res.statusCode).toBe(200)
      const incoming = authz.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'incoming request')
      out.push({ address: incoming?.req?.remoteAddress, secure: res.headers['strict-transport-security'] !== undefined || undefined })
    }
    return out.map((o) => ({ address: o.address, secure: o.secure }))
  } finally {
    await authz.close()
  }
}

const addresses = async (trustProxy: string, peers: string[]) => (await seenFrom(trustProxy, peers)).map((o) => o.address)

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
