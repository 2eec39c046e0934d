// A bounded GET of a document a client or an operator registered (a client's jwks_uri, RFC 7591
// §2): https only (http for this machine's names), no redirects followed, a deadline for the
// whole exchange and a cap on the bytes read, so that a slow, huge or redirecting answer can
// neither hang a request nor fill memory. The URL comes from the seed (a trusted administrator);
// what such a URL may reach is said in docs/client-authentication.md.
import { isLocalHost } from './redirect-uri.js'

export interface OutboundFetchOptions {
  /** The whole exchange, headers and body (ms). */
  timeoutMs: number
  /** The most body bytes read; a longer answer is refused. */
  maxBytes: number
  /** Sent as Accept. */
  accept?: string
  /** Replaces the global fetch (tests). */
  fetch?: typeof fetch
}

/** Why an outbound fetch failed, as a fixed word fit for a log line (never the URL's contents). */
export type OutboundFetchFailure = 'bad_url' | 'timeout' | 'connection_failed' | 'http_status' | 'redirect' | 'too_large'

export class OutboundFetchError extends Error {
  override readonly name = 'OutboundFetchError'
  constructor(
    readonly reason: OutboundFetchFailure,
    readonly httpStatus?: number,
  ) {
    super(`outbound fetch failed: ${reason}${httpStatus === undefined ? '' : ` (${httpStatus})`}`)
  }
}

/** The rule every outbound URL follows: an absolute https URL, http only for localhost names, no credentials. */
export function outboundUrlProblem(uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'is not an absolute URL'
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLocalHost(url.hostname))) {
    return 'must use https (http only for localhost, *.localhost, 127.0.0.1 and [::1])'
  }
  if (url.username || url.password) return 'must not contain credentials'
  if (uri.includes('#')) return 'must not contain a fragment (#)'
  return undefined
}

/** GETs `uri` and returns its body as text; throws OutboundFetchError. */
export async function fetchBounded(uri: string, o: OutboundFetchOptions): Promise<string> {
  if (outboundUrlProblem(uri)) throw new OutboundFetchError('bad_url')
  const signal = AbortSignal.timeout(o.timeoutMs)
  let res: Response
  try {
    res = await (o.fetch ?? fetch)(uri, {
      method: 'GET',
      headers: o.accept ? { accept: o.accept } : {},
      redirect: 'manual', // a redirect is an answer, never followed
      signal,
    })
  } catch (err) {
    throw new OutboundFetchError(isTimeout(err) ? 'timeout' : 'connection_failed')
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {})
    throw new OutboundFetchError('redirect', res.status)
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {})
    throw new OutboundFetchError('http_status', res.status)
  }
  const declared = Number(res.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > o.maxBytes) {
    await res.body?.cancel().catch(() => {})
    throw new OutboundFetchError('too_large')
  }
  return readCapped(res, o.maxBytes)
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > maxBytes) {
        await reader.cancel().catch(() => {})
        throw new OutboundFetchError('too_large')
      }
      chunks.push(value)
    }
  } catch (err) {
    if (err instanceof OutboundFetchError) throw err
    throw new OutboundFetchError(isTimeout(err) ? 'timeout' : 'connection_failed')
  }
  return Buffer.concat(chunks).toString('utf8')
}

const isTimeout = (err: unknown) => err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
