// The request id: a client's or proxy's X-Request-Id when it is short and plain (so that one id
// follows a request across services), else a fresh UUID. Anything longer or with other characters
// (spaces, quotes, control characters, a forged log line) is never written to the logs or echoed.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** Letters, digits and . _ : - ; at most 64 characters (a UUID, a trace id, a ULID all fit). */
const PLAIN = /^[A-Za-z0-9._:-]{1,64}$/

export function requestIdOf(req: Pick<IncomingMessage, 'headers'>): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && PLAIN.test(given) ? given : randomUUID()
}
