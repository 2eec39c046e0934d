// TRUST_PROXY: behind a reverse proxy the client address comes from X-Forwarded-For; without it,
// a forged header is ignored.
import { describe, expect, it } from 'vitest'
import { createTestApp } from '../helpers/app.js'

async function loggedAddress(trustProxy: 'true' | 'false'): Promise<unknown> {
  const t = await createTestApp({ env: { TRUST_PROXY: trustProxy } })
  try {
    await t.app.inject({
      method: 'GET', url: '/health/live', remoteAddress: '10.0.0.5',
      headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' },
    })
    const incoming = t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'incoming request')
    return incoming?.req?.remoteAddress
  } finally {
    await t.close()
  }
}

describe('TRUST_PROXY', () => {
  it('takes the client address from X-Forwarded-For when true', async () => {
    expect(await loggedAddress('true')).toBe('203.0.113.7')
  })
  it('ignores X-Forwarded-For when false', async () => {
    expect(await loggedAddress('false')).toBe('10.0.0.5')
  })
})
