// X-Request-Id: a short, plain id from a client or proxy is kept (answered and logged), anything
// else is replaced by a generated UUID and never written anywhere. Health probes log at debug.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
})
afterAll(() => authz.close())

async function idFor(header: string | undefined) {
  authz.logs.length = 0
  const res = await authz.app.inject({
    method: 'GET',
    url: '/.well-known/openid-configuration',
    headers: header === undefined ? {} : { 'x-request-id': header },
  })
  expect(res.statusCode).toBe(200)
  const logged = authz.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'incoming request')
    .map((l) => l.reqId)
  return { answered: res.headers['x-request-id'], logged }
}

describe('X-Request-Id', () => {
  it('keeps a short, plain id: answered and logged as it came', async () => {
    for (const id of ['abc-123', '4bf92f3577b34da6a3ce929d0e0e4736', 'req_01J9Z.x:7', 'a'.repeat(64)]) {
      expect(await idFor(id)).toEqual({ answered: id, logged: [id] })
    }
  })

  it('replaces a long or unusual one with a generated UUID, and writes the original nowhere', async () => {
    const refused = ['a'.repeat(65), 'has space', 'quote"d', 'semi;colon', 'new\\nline', '{"level":60}', 'é-accent', '']
    for (const id of refused) {
      const seen = await idFor(id)
      expect(seen.answered, id).toMatch(UUID)
      expect(seen.logged).toEqual([seen.answered])
      if (id.length > 3) expect(authz.logs.join('\n')).not.toContain(id)
    }
  })

  it('generates one when none is sent, a new one for each request', async () => {
    const a = await idFor(undefined)
    const b = await idFor(undefined)
    expect(a.answered).toMatch(UUID)
    expect(b.answered).toMatch(UUID)
    expect(a.answered).not.toBe(b.answered)
  })
})

describe('health probes', () => {
  it('write no request lines at info, and write them at debug', async () => {
    authz.logs.length = 0
    for (const url of ['/health/live', '/health/ready', '/health/live?x=1'])
      expect((await authz.app.inject({ method: 'GET', url })).statusCode).toBe(200)
    expect(authz.logs).toEqual([])
    const d = await createTestApp({ env: { LOG_LEVEL: 'debug' } })
    try {
      d.logs.length = 0
      await d.app.inject({ method: 'GET', url: '/health/live' })
      const lines = d.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(lines.map((l) => [l.level, l.msg])).toEqual([
        [20, 'incoming request'],
        [20, 'request completed'],
      ])
      expect(lines[1]).toMatchObject({ res: { statusCode: 200 } })
    } finally {
      await d.close()
    }
  })

  it('leave every other request at info', async () => {
    authz.logs.length = 0
    await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    await authz.app.inject({ method: 'GET', url: '/health/livez' })
    const lines = authz.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')
    expect(lines.map((l) => l.level)).toEqual([30, 30, 30, 30])
  })
})
