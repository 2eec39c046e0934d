// pino JSON logs. Credentials never reach the output: nothing logs headers or bodies (the `req`
// serializer below keeps method, redacted URL and peer only), and should something log them, the
// Authorization and Cookie headers and every form field that carries a secret are redacted.
import { pino, type DestinationStream, type Logger } from 'pino'

export const REDACTED_FIELDS = [
  'client_secret',
  'password',
  'token',
  'refresh_token',
  'access_token',
  'id_token',
  'code',
  'code_verifier',
  'device_code',
  'auth_req_id',
  'client_assertion',
  'request',
  'login_hint_token',
  'id_token_hint',
  'user_code',
  'csrf',
] as const

// Explicit paths only. A leading wildcard (`*.token`) makes pino run the redactor over every
// binding of every child logger, and Fastify creates one child per request: measured at ~13 µs
// per request with the wildcards against ~1 µs without, even when nothing is logged.
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  ...REDACTED_FIELDS.flatMap((f) => [`body.${f}`, `req.body.${f}`, `params.${f}`, `query.${f}`]),
]

const SENSITIVE = new Set<string>(REDACTED_FIELDS)

/** The URL with the value of every sensitive query parameter replaced: a client may (wrongly) send a secret there. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq < 0 ? pair : pair.slice(0, eq)
      let decoded = name
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '))
      } catch {
        // a malformed name is logged as sent
      }
      return eq >= 0 && SENSITIVE.has(decoded) ? `${name}=[redacted]` : pair
    })
  return `${url.slice(0, q)}?${params.join('&')}`
}

interface LoggedRequest {
  method?: string
  url?: string
  ip?: string
  headers?: Record<string, unknown>
  socket?: { remoteAddress?: string; remotePort?: number }
}

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        // Fastify logs req on every incoming request: method, redacted URL and peer, never headers or body.
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: req.url === undefined ? undefined : redactUrl(req.url),
          host: req.headers?.host,
          remoteAddress: req.ip ?? req.socket?.remoteAddress,
          remotePort: req.socket?.remotePort,
        }),
        err: pino.stdSerializers.err,
      },
      base: undefined, // no pid/hostname noise; the container runtime adds its own
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  )
}
