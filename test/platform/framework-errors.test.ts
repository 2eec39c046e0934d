// Errors that Node or Fastify answer before any route runs (an unparsable request, headers too
// large, a malformed URL, a body too large or of the wrong type, a request arriving while the server
// shuts down) answer in OAuth shape with no-store, like every other error (ARCHITECTURE.md "Wire rules").
// Over a real socket: these answers never reach app.inject.
import { STATUS_CODES } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BODY_LIMIT } from '../../src/app.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { expectOAuthErrorBody } from '../helpers/error-shape.js'

let authz: TestApp
let port: number
beforeAll(async () => {
  authz = await createTestApp()
  await authz.app.listen({ port: 0, host: '127.0.0.1' })
  port = (authz.app.server.address() as { port: number }).port
})
afterAll(() => authz.close())

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Parses every HTTP/1.1 response in `text` (pipelined responses follow one another). */
function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = []
  let rest = text
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n')
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n')
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
    const length = Number(headers['content-length'] ?? 0)
    const body = rest.slice(end + 4, end + 4 + length)
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body })
    rest = rest.slice(end + 4 + length)
  }
  return out
}

/** Writes raw bytes (in parts, with a pause between) and collects what comes back until the socket closes. */
async function exchange(parts: string[], opts: { between?: () => Promise<void> } = {}): Promise<RawResponse[]> {
  return parseResponses(await exchangeText(parts, opts))
}

/** As exchange, the bytes as they came (latin1). */
function exchangeText(parts: string[], opts: { between?: () => Promise<void> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (d) => (text += d.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => resolve(text))
    void (async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await opts.between?.()
        socket.write(part)
      }
      setTimeout(() => socket.end(), 2000).unref()
    })()
  })
}

function expectOAuthJson(res: RawResponse | undefined, status: number, error: string, description?: string) {
  expect(res?.status).toBe(status)
  expect(res!.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(res!.headers['cache-control']).toBe('no-store')
  expect(res!.headers.pragma).toBe('no-cache')
  const body = JSON.parse(res!.body)
  expectOAuthErrorBody(body, `${status} ${error}`)
  expect(body).toEqual({ error, ...(description !== undefined ? { error_description: description } : {}) })
}

const form = (path: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`

describe('errors raised below the routes', () => {
  it('answers headers too large with 431 invalid_request', async () => {
    const [res] = await exchange([`POST /connect/token HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`])
    expectOAuthJson(res, 431, 'invalid_request', 'the request headers are too large')
  })

  it('answers an unparsable request with 400 invalid_request', async () => {
    for (const garbage of [
      'NOT HTTP AT ALL\r\n\r\n',
      'POST /connect/token HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n',
      'POST /connect/token HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
    ]) {
      const [res] = await exchange([garbage])
      expectOAuthJson(res, 400, 'invalid_request', 'the request is not valid HTTP')
    }
  })

  // RFC 9110 §9.3.2: the answer to HEAD carries the header fields a GET would get and no content.
  // The attack: bytes after a HEAD answer are not its body but, to the client or a proxy reading
  // the connection, the start of another response (a response injected into the stream).
  it('answers HEAD with the same status and header fields and no body, for headers too large and an unparsable request', async () => {
    const cases: Array<[string, number, string]> = [
      [`HEAD /connect/token HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'the request headers are too large'],
      ['HEAD /connect/token HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n', 400, 'the request is not valid HTTP'],
      ['HEAD /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 400, 'the request is not valid HTTP'],
    ]
    for (const [request, status, description] of cases) {
      const text = await exchangeText([request])
      const end = text.indexOf('\r\n\r\n')
      const where = `${status} ${description}`
      expect({ where, body: text.slice(end + 4) }).toEqual({ where, body: '' })
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      const getBody = JSON.stringify({ error: 'invalid_request', error_description: description })
      expect({ statusLine, headers }).toEqual({
        statusLine: `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        // RFC 9110 §8.6: Content-Length, if sent, is what a GET would have had.
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'content-length': String(getBody.length),
          'cache-control': 'no-store',
          pragma: 'no-cache',
          connection: 'close',
        },
      })
    }
  })

  it('still answers a GET or POST that fails the same way with its JSON body', async () => {
    for (const method of ['GET', 'POST', 'OPTIONS']) {
      const [res] = await exchange([`${method} /connect/token HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`])
      expectOAuthJson(res, 431, 'invalid_request', 'the request headers are too large')
    }
  })

  it('answers a malformed URL, a body too large and a body of another type with 400 invalid_request', async () => {
    const [badUrl] = await exchange([`GET /connect/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`])
    expectOAuthJson(badUrl, 400, 'invalid_request', 'malformed request')
    const [tooLarge] = await exchange([form('/connect/token', `a=${'x'.repeat(BODY_LIMIT)}`, 'Connection: close\r\n')])
    expectOAuthJson(tooLarge, 400, 'invalid_request', 'request body too large')
    const [json] = await exchange([
      `POST /connect/token HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 2\r\nConnection: close\r\n\r\n<a`,
    ])
    expectOAuthJson(json, 400, 'invalid_request', 'unsupported content type: use application/x-www-form-urlencoded')
  })

  it('answers a request that arrives while the server shuts down with 503 temporarily_unavailable', async () => {
    // A slow request holds the server open; a second one pipelined behind it arrives after close began.
    const body = 'grant_type=client_credentials'
    let closing: Promise<unknown> | undefined
    const responses = await exchange(
      [form('/connect/token', body).slice(0, -10), `${body.slice(-10)}GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`],
      {
        between: async () => {
          await new Promise((r) => setTimeout(r, 200)) // transport timing only: let the head arrive
          closing = authz.app.close()
          await new Promise((r) => setTimeout(r, 100)) // and the close begin
        },
      },
    )
    await closing
    expect(responses).toHaveLength(2)
    expectOAuthJson(responses[0], 401, 'invalid_client', 'client authentication is required') // in flight: answered, not dropped
    expectOAuthJson(responses[1], 503, 'temporarily_unavailable')
    expect(responses[1]!.headers.connection).toBe('close')
    expect(responses[1]!.headers['retry-after']).toBe('1')
  })
})
