// RFC 9457 problem details: every error of the admin API is one, `application/problem+json`, with
// `type` about:blank (§4.2.1: the title is the status's phrase) and a fixed `detail` sentence that
// never repeats a secret. A request the schema refuses lists each problem with its JSON path in
// the request body, as seed file errors name them (docs/seed-file.md).

export interface ProblemEntry {
  /** The JSON path in the request body, as `allowedScopes[1]`; `(root)` for the body itself. */
  path: string
  detail: string
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  428: 'Precondition Required',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

export class AdminProblem extends Error {
  override readonly name = 'AdminProblem'
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly opts: { errors?: ProblemEntry[]; headers?: Record<string, string> } = {},
  ) {
    super(detail)
  }

  body(): Record<string, unknown> {
    return {
      type: 'about:blank',
      title: TITLES[this.status] ?? 'Error',
      status: this.status,
      detail: this.detail,
      ...(this.opts.errors ? { errors: this.opts.errors } : {}),
    }
  }
}

export const notFound = (what: string) => new AdminProblem(404, `no such ${what}`)

/** A seed problem line, "clients[0].allowedScopes[1]: message", with the prefix of the document it was put in dropped. */
export function problemEntry(line: string, prefix: string): ProblemEntry {
  const sep = line.indexOf(': ')
  const full = sep < 0 ? '(root)' : line.slice(0, sep)
  const detail = sep < 0 ? line : line.slice(sep + 2)
  const path = full === prefix ? '(root)' : full.startsWith(`${prefix}.`) ? full.slice(prefix.length + 1) : full
  return { path, detail }
}

export const invalid = (errors: ProblemEntry[], detail = 'the request body is not a valid resource') =>
  new AdminProblem(400, detail, { errors })
