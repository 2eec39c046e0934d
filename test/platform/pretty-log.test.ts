// LOG_FORMAT=pretty, as a developer reads it at a terminal: one short line per request, audit
// events marked, the CIBA approval URL and the device verification URL as they are, no JSON, and
// still nothing secret.
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/http/logger.js'
import { prettyMessage, type Colors } from '../../src/http/pretty-log.js'
import { loadConfig } from '../../src/config.js'
import { applySeedFile } from '../../src/seed/apply.js'
import { DEMO_SEED_FILE } from '../../src/seed/paths.js'
import { basic, createTestApp, form, FORM, TEST_ISSUER, type TestApp } from '../helpers/app.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp({ env: { LOG_FORMAT: 'pretty' } })
  await applySeedFile(authz.db, DEMO_SEED_FILE)
})
afterAll(() => authz.close())

const TIME = '\\d\\d:\\d\\d:\\d\\d'

/**
 * The lines written while `run` ran. The request's own line is written by the response hook,
 * which may run after inject has resolved: wait for it, so that it is not counted as the next
 * test's. The bound is in time, not in turns of the event loop: on a loaded machine the write
 * took longer than 500 turns, and the line was missed.
 */
async function linesOf(run: () => Promise<unknown>): Promise<string[]> {
  const from = authz.logs.length
  await run()
  const done = () => authz.logs.slice(from).some((l) => / \d+ ms$/.test(l))
  const until = Date.now() + 10_000
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
  return authz.logs.slice(from)
}

describe('LOG_FORMAT=pretty', () => {
  it('writes a request as one line: time, level, method, path, status and duration, and no JSON', async () => {
    const lines = await linesOf(() =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/token',
        headers: { ...FORM, authorization: basic('demo-backend', 'demo-backend-secret') },
        payload: form({ grant_type: 'client_credentials' }),
      }),
    )
    const requests = lines.filter((l) => l.includes('/connect/token'))
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatch(new RegExp(`^${TIME} INFO: POST /connect/token 200 \\d+ ms$`))
    // The audit event stands out: marked, its name first, its fields as key=value.
    const audit = lines.filter((l) => l.includes('AUDIT'))
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatch(
      new RegExp(
        `^${TIME} INFO: AUDIT token\\.issued client_id=demo-backend grant_type=client_credentials address=127\\.0\\.0\\.1 scope="orders\\.read orders\\.write" token_types=access_token access_token_format=jwt$`,
      ),
    )
    for (const line of lines) {
      expect(line).not.toMatch(/^\{/)
      expect(line).not.toContain('"level"')
      expect(line.length).toBeLessThan(200)
    }
  })

  it('says why a request failed on a line of its own, then the request line', async () => {
    const lines = await linesOf(() =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/token',
        headers: { ...FORM, authorization: basic('demo-backend', 'demo-backend-secret') },
        payload: form({ grant_type: 'urn:example:no-such-grant' }),
      }),
    )
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^${TIME} INFO: unsupported_grant_type error=unsupported_grant_type$`)),
      expect.stringMatching(new RegExp(`^${TIME} INFO: POST /connect/token 400 \\d+ ms$`)),
    ])
  })

  it('prints the CIBA approval URL plainly, at the end of its line', async () => {
    const lines = await linesOf(() =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/ciba',
        headers: { ...FORM, authorization: basic('demo-ciba', 'demo-ciba-secret') },
        payload: form({ scope: 'openid', login_hint: 'alice' }),
      }),
    )
    const approval = lines.find((l) => l.includes('CIBA approval requested'))
    expect(approval).toMatch(
      new RegExp(
        `^${TIME} INFO: CIBA approval requested: open approval_url to approve or deny request_id=(\\w+) client_id=demo-ciba subject=alice-0001 ${TEST_ISSUER.replace(/\./g, '\\.')}/ciba/approve\\?request=\\1$`,
      ),
    )
    expect(lines.filter((l) => l.includes('POST /connect/ciba'))).toEqual([
      expect.stringMatching(new RegExp(`^${TIME} INFO: POST /connect/ciba 200 \\d+ ms$`)),
    ])
  })

  it('prints the device verification URL plainly, and never the user code', async () => {
    let userCode = ''
    const lines = await linesOf(async () => {
      const res = await authz.app.inject({
        method: 'POST',
        url: '/connect/deviceauthorization',
        headers: FORM,
        payload: form({ client_id: 'demo-device', scope: 'openid' }),
      })
      userCode = res.json<{ user_code: string }>().user_code
    })
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${TIME} INFO: device authorization started: the user enters the code at verification_uri client_id=demo-device ${TEST_ISSUER.replace(/\./g, '\\.')}/device$`,
        ),
      ),
    )
    expect(userCode).not.toBe('')
    expect(lines.join('\n')).not.toContain(userCode)
  })

  it('keeps credentials redacted, and cuts a long URL', async () => {
    const lines = await linesOf(() =>
      authz.app.inject({ method: 'GET', url: `/connect/userinfo?access_token=S3CRET-TOKEN&x=${'a'.repeat(200)}` }),
    )
    const request = lines.find((l) => l.includes('GET /connect/userinfo'))
    expect(request).toMatch(new RegExp(`^${TIME} INFO: GET /connect/userinfo\\?access_token=\\[redacted\\]&x=a+… 401 \\d+ ms$`))
    expect(lines.join('\n')).not.toContain('S3CRET-TOKEN')
  })

  it('colours a terminal line and strips control characters from what a client sent', () => {
    const paint = (open: string) => (s: string) => `\u001b[${open}m${s}\u001b[0m`
    const colors: Colors = {
      bold: paint('1'),
      dim: paint('2'),
      red: paint('31'),
      green: paint('32'),
      yellow: paint('33'),
      cyan: paint('36'),
      magenta: paint('35'),
    }
    const line = prettyMessage({ req: { method: 'GET', url: '/x\u001b[2J\u0007' }, res: { statusCode: 404 }, responseTime: 1.4 }, colors)
    expect(line).toBe('\u001b[1mGET\u001b[0m /x[2J \u001b[33m404\u001b[0m 1 ms')
    // Objects and lists of them as JSON, lists of words comma-separated.
    expect(prettyMessage({ msg: 'keys replaced', replaced: [{ kid: 'a' }], applied: ['0001', '0002'] }, colors)).toBe(
      'keys replaced \u001b[2mreplaced=[{"kid":"a"}] applied=0001,0002\u001b[0m',
    )
  })

  it('writes colours where asked to, and JSON stays the default', () => {
    const out: string[] = []
    const destination = new Writable({
      write(chunk, _enc, cb) {
        out.push(chunk.toString())
        cb()
      },
    })
    createLogger({ level: 'info', format: 'pretty', colorize: true, destination }).warn('careful')
    expect(out.join('')).toMatch(new RegExp(`^${TIME} \u001b\\[33mWARN\u001b\\[39m: .*careful.*\n$`))
    expect(loadConfig({}).logFormat).toBe('json')
    expect(loadConfig({}, { terminal: true }).logFormat).toBe('pretty')
    expect(loadConfig({ LOG_FORMAT: 'json' }, { terminal: true }).logFormat).toBe('json')
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty')
  })
})
