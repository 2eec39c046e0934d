// LOG_FORMAT=pretty: the log for a person at a terminal. The records are the JSON lines of
// src/http/logger.ts, after its serializers and redaction; pino-pretty parses each, colours its
// level and writes its time, and prettyMessage() below chooses what the line says:
//   10:31:02 INFO: POST /connect/token 200 4 ms
//   10:31:02 INFO: AUDIT token.issued client_id=demo-backend grant_type=client_credentials
//   10:31:09 INFO: CIBA approval requested: open approval_url to approve or deny http://localhost:5000/ciba/approve?id=…
// Formatting runs in this thread (pino-pretty's prettyFactory, not its worker transport) and
// writes synchronously, so the lines written just before process.exit() are never lost.
import { pino, type DestinationStream } from 'pino'
import { isColorSupported, prettyFactory } from 'pino-pretty'

type Paint = (text: string) => string
/** The colours used (pino-pretty's colorette; without colour, each returns its text). */
export interface Colors {
  bold: Paint
  dim: Paint
  red: Paint
  yellow: Paint
  green: Paint
  cyan: Paint
  magenta: Paint
}

/** Written as they are, at the end of the line, so that a terminal makes them links. */
const PLAIN_URLS = ['approval_url', 'verification_uri'] as const

/** Carried by every line or said by the line itself: not repeated as key=value. */
const HIDDEN = new Set(['level', 'time', 'msg', 'reqId', 'req', 'res', 'responseTime', 'err', 'banner'])
/** An audit event's line: its name says what happened (and its colour whether it failed). */
const AUDIT_HIDDEN = new Set([...HIDDEN, 'log', 'audit_version', 'event', 'outcome', 'request_id'])

/** A request's URL longer than this is cut (LOG_FORMAT=json and LOG_LEVEL=debug keep it whole). */
const URL_LENGTH = 80
const VALUE_LENGTH = 100

// Terminal control sequences in logged input (a URL, a username) must not reach the terminal.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
const clean = (value: unknown): string => String(value).replace(CONTROL, '')
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export interface PrettyOptions {
  /** Where the lines go; standard output when unset. */
  destination?: DestinationStream | undefined
  /** Colours; by default where standard output is a terminal that shows them (not with NO_COLOR). */
  colorize?: boolean | undefined
}

/** A pino destination that writes each record as one line for a person (errors add their stack). */
export function createPrettyDestination(opts: PrettyOptions = {}): DestinationStream {
  const format = prettyFactory({
    colorize: opts.colorize ?? isColorSupported,
    translateTime: 'SYS:HH:MM:ss',
    hideObject: true,
    customPrettifiers: { time: (time) => (typeof time === 'string' ? time : JSON.stringify(time)) }, // no brackets
    messageFormat: (log, _key, _label, { colors }) => prettyMessage(log, colors),
  })
  const out = opts.destination ?? pino.destination({ dest: 1, sync: true })
  return {
    write(line: string) {
      out.write(format(line))
    },
  }
}

/** What one record says: a request's summary, an audit event, or the message and its fields. */
export function prettyMessage(log: Record<string, unknown>, c: Colors): string {
  const req = log.req as { method?: unknown; url?: unknown } | undefined
  const res = log.res as { statusCode?: unknown } | undefined
  if (req && res && typeof log.responseTime === 'number') {
    const status = Number(res.statusCode)
    const colour = status >= 500 ? c.red : status >= 400 ? c.yellow : status >= 300 ? c.cyan : c.green
    return `${c.bold(clean(req.method))} ${cut(clean(req.url), URL_LENGTH)} ${colour(String(status))} ${Math.round(log.responseTime)} ms`
  }
  const parts: string[] = []
  const audit = log.log === 'audit'
  if (audit) parts.push(c.bold(c.magenta('AUDIT')), c.bold((log.outcome === 'failure' ? c.red : c.magenta)(clean(log.event))))
  else parts.push(clean(log.msg))
  const hidden = audit ? AUDIT_HIDDEN : HIDDEN
  const fields = Object.entries(log)
    .filter(([key, value]) => !hidden.has(key) && !(PLAIN_URLS as readonly string[]).includes(key) && value !== undefined)
    .map(([key, value]) => `${key}=${field(value)}`)
  if (fields.length > 0) parts.push(c.dim(fields.join(' ')))
  for (const key of PLAIN_URLS) if (typeof log[key] === 'string') parts.push(clean(log[key]))
  const err = log.err as { type?: unknown; message?: unknown; stack?: unknown } | undefined
  if (err) parts.push(c.red(`${clean(err.type ?? 'Error')}: ${clean(err.message)}`))
  let line = parts.join(' ')
  // Lines of their own below the message (the start-up banner); the stack of an error.
  if (Array.isArray(log.banner)) line += log.banner.map((l) => `\n    ${clean(l)}`).join('')
  if (err && typeof err.stack === 'string') line += `\n${c.dim(err.stack.split('\n').slice(1).map(clean).join('\n'))}`
  return line
}

/** A field's value in key=value: quoted when it has spaces, arrays comma-separated, long ones cut. */
function field(value: unknown): string {
  const primitive = (v: unknown) => v === null || typeof v !== 'object'
  const text =
    Array.isArray(value) && value.every(primitive)
      ? value.map(clean).join(',')
      : primitive(value)
        ? clean(value)
        : clean(JSON.stringify(value))
  const short = cut(text, VALUE_LENGTH)
  return /\s/.test(short) || short === '' ? JSON.stringify(short) : short
}
