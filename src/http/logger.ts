// pino logs: JSON lines, or with LOG_FORMAT=pretty the same records as lines for a person
// (src/http/pretty-log.ts). Credentials never reach the output: nothing logs headers or bodies (the `req`
// serializer below keeps method, redacted URL and peer only), and should something log them, the
// Authorization and Cookie headers and every form field that carries a secret are redacted.
import type { FastifyBaseLogger } from 'fastify'
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Level, type Logger } from 'pino'
import type { LogFormat } from '../config.js'
import { createPrettyDestination } from './pretty-log.js'

export const REDACTED_FIELDS = [
  'client_secret',
  'password',
  'token',
  'subject_token',
  'actor_token',
  'assertion',
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
export function redactUrl(url: string, nested = false): string {
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
      if (eq < 0) return pair
      if (SENSITIVE.has(decoded)) return `${name}=[redacted]`
      // One level down only: a value nested deeper is logged as sent, so that a crafted URL
      // cannot make logging recurse.
      return nested ? pair : `${name}=${redactNestedUrl(pair.slice(eq + 1))}`
    })
  return `${url.slice(0, q)}?${params.join('&')}`
}

/**
 * A parameter whose value is itself a local URL with a query (the sign-in page's return_to, as
 * /device?user_code=...) gets that query redacted too; any other value is logged as sent.
 */
function redactNestedUrl(value: string): string {
  if (!value.includes('?') && !/%3f/i.test(value)) return value
  try {
    const inner = decodeURIComponent(value.replace(/\+/g, ' '))
    const redacted = redactUrl(inner, true)
    return redacted === inner ? value : encodeURIComponent(redacted)
  } catch {
    return value
  }
}

interface LoggedRequest {
  method?: string
  url?: string
  ip?: string
  headers?: Record<string, unknown>
  socket?: { remoteAddress?: string; remotePort?: number }
}

export interface LoggerOptions {
  level: string
  /** json (the default) or pretty. */
  format?: LogFormat | undefined
  /** Where the lines go; standard output when unset. */
  destination?: DestinationStream | undefined
  /** pretty only: colours; by default where standard output is a terminal that shows them. */
  colorize?: boolean | undefined
}

export function createLogger(opts: LoggerOptions): Logger {
  const destination =
    opts.format === 'pretty' ? createPrettyDestination({ destination: opts.destination, colorize: opts.colorize }) : opts.destination
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
    destination,
  )
}

/**
 * Fastify's `childLoggerFactory`. Fastify makes one child logger per request ({ reqId }), and
 * pino's child() costs about a microsecond even when nothing is logged; this one makes the pino
 * child on the first line at an enabled level, so a request that logs nothing (the hot paths at
 * LOG_LEVEL=warn) never pays for it. The lines written are the same: the same child writes them.
 */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  // A route with its own level or serializers gets its child at once (none of ours has them).
  if (Object.keys(opts).length > 0) return logger.child(bindings, opts)
  return new LazyChildLogger(logger as Logger, bindings)
}

class LazyChildLogger {
  #parent: Logger
  #bindings: Bindings
  #child: Logger | undefined
  constructor(parent: Logger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }
  #get(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings))
  }
  #log(level: Level, args: unknown[]): void {
    if (!(this.#child ?? this.#parent).isLevelEnabled(level)) return
    const child = this.#get()
    Reflect.apply(child[level], child, args)
  }
  get level(): string {
    return (this.#child ?? this.#parent).level
  }
  set level(level: string) {
    this.#get().level = level
  }
  fatal(...args: unknown[]) {
    this.#log('fatal', args)
  }
  error(...args: unknown[]) {
    this.#log('error', args)
  }
  warn(...args: unknown[]) {
    this.#log('warn', args)
  }
  info(...args: unknown[]) {
    this.#log('info', args)
  }
  debug(...args: unknown[]) {
    this.#log('debug', args)
  }
  trace(...args: unknown[]) {
    this.#log('trace', args)
  }
  silent() {}
  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#get().child(bindings, opts)
  }
}
