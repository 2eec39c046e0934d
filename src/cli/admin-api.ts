// The admin API of the server running on the embedded database, as the CLI reaches it: through the
// socket (or loopback port) and with the credential the server wrote to DATA_DIR for its local CLI
// (src/admin/local-access.ts). A file whose server is gone (its pid dead, nobody answering) is
// stale: no server, and the CLI opens the database itself. Errors are one line each, printed as
// every command's errors are (src/cli.ts).
import { request } from 'node:http'
import { connect } from 'node:net'
import { readLocalAdminAccess, type LocalAdminAccess } from '../admin/local-access.js'
import { isAlive } from '../db/data-dir-lock.js'

export interface AdminAnswer {
  status: number
  /** The JSON body; undefined when there was none (204). */
  body: unknown
  etag: string | undefined
}

export interface AdminCall {
  body?: unknown
  ifMatch?: string | undefined
  ifNoneMatch?: string | undefined
}

export interface AdminApi {
  call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, opts?: AdminCall): Promise<AdminAnswer>
}

/** A path segment: an id as it is, escaped. */
export const seg = (id: string) => encodeURIComponent(id)

const where = (a: LocalAdminAccess) => (a.socket !== undefined ? { socketPath: a.socket } : { host: '127.0.0.1', port: a.port! })

/** Whether something accepts connections where the file says (a dead server's socket file refuses them). */
function answers(access: LocalAdminAccess): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = access.socket !== undefined ? connect(access.socket) : connect(access.port!, '127.0.0.1')
    socket.setTimeout(5000)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}

/** The running server's admin API for the CLI of `dataDir`, or undefined when no server runs there. */
export async function localAdminApi(dataDir: string): Promise<AdminApi | undefined> {
  const access = await readLocalAdminAccess(dataDir)
  if (!access || !isAlive(access.pid) || !(await answers(access))) return undefined
  return {
    call(method, path, opts = {}) {
      const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body)
      const headers: Record<string, string> = { authorization: `Bearer ${access.credential}` }
      if (payload !== undefined) headers['content-type'] = 'application/json'
      if (opts.ifMatch !== undefined) headers['if-match'] = opts.ifMatch
      if (opts.ifNoneMatch !== undefined) headers['if-none-match'] = opts.ifNoneMatch
      return new Promise((resolve, reject) => {
        const req = request({ ...where(access), method, path, headers, timeout: 60_000 }, (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => {
            let body: unknown
            try {
              body = text === '' ? undefined : JSON.parse(text)
            } catch {
              return reject(new Error(`the server's admin API answered ${res.statusCode} with a body that is not JSON`))
            }
            const etag = res.headers.etag
            resolve({ status: res.statusCode ?? 0, body, etag: typeof etag === 'string' ? etag : undefined })
          })
          res.on('error', reject)
        })
        let timedOut = false
        req.on('timeout', () => {
          timedOut = true
          req.destroy()
        })
        req.on('error', (err) =>
          reject(
            new Error(timedOut ? 'the running server did not answer within 60 seconds' : `cannot reach the running server: ${err.message}`),
          ),
        )
        req.end(payload)
      })
    },
  }
}

/** The problem's `detail`, when the answer is an RFC 9457 problem. */
export function detailOf(answer: AdminAnswer): string | undefined {
  const b = answer.body
  return typeof b === 'object' && b !== null && 'detail' in b && typeof b.detail === 'string' ? b.detail : undefined
}

/** The problem's errors, each with its JSON path in the request body. */
export function errorsOf(answer: AdminAnswer): { path: string; detail: string }[] {
  const b = answer.body
  return typeof b === 'object' && b !== null && 'errors' in b && Array.isArray(b.errors)
    ? (b.errors as { path: string; detail: string }[])
    : []
}

/** An answer no command expects: its status and the server's one-line reason. */
export function unexpected(answer: AdminAnswer): Error {
  return new Error(`the running server refused: ${answer.status} ${detailOf(answer) ?? ''}`.trimEnd())
}

/** A write the server refused because the resource changed since the command read it. */
export const changedMeanwhile = (what: string) => new Error(`${what} changed while this command ran: run it again`)

/** Every item of a paginated list (limit 200 each page); `notFound`: what a 404 means, when it can mean something. */
export async function listAll<T>(api: AdminApi, path: string, notFound?: () => Error): Promise<T[]> {
  const all: T[] = []
  let cursor: string | undefined
  do {
    const answer = await api.call('GET', `${path}?limit=200${cursor === undefined ? '' : `&cursor=${seg(cursor)}`}`)
    if (answer.status === 404 && notFound) throw notFound()
    if (answer.status !== 200) throw unexpected(answer)
    const page = answer.body as { items: T[]; nextCursor?: string }
    all.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return all
}

/**
 * The problems of a 400 as the lines of a SeedError: each path back below `prefix`, the entry of
 * the seed document it was put in (src/admin/problem.ts problemEntry takes it off).
 */
export function seedLines(errors: { path: string; detail: string }[], prefix: string): string[] {
  return errors.map((e) => {
    const path = prefix === '' ? e.path : e.path === '(root)' ? prefix : `${prefix}.${e.path}`
    return `${path}: ${e.detail}`
  })
}
