// pino JSON logs. Credentials never reach the output: the Authorization and Cookie headers and
// every form field that carries a secret or a token are redacted wherever they appear.
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

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  ...REDACTED_FIELDS.flatMap((f) => [`body.${f}`, `req.body.${f}`, `params.${f}`, `*.${f}`]),
]

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined, // no pid/hostname noise; the container runtime adds its own
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  )
}
