// Environment → frozen Config, validated once. src/main.ts is the only caller with process.env.
// Every entry says what it expects with .describe(): a bad value then reads as one sentence,
// `PORT must be an integer from 0 to 65535, got "abc"` (the helpers below describe themselves).
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { z } from 'zod'
import { isAdminScope } from './domain/admin-scopes.js'
import { contrastRatio, HEX_COLOUR } from './domain/colour.js'

/** WCAG 2.x §1.4.3 (AA): the least contrast of normal text against its background. */
export const MIN_CONTRAST = 4.5

const int = (min: number, max: number, def: number) =>
  z.coerce.number().int().min(min).max(max).default(def).describe(`an integer from ${min} to ${max}`)
const seconds = (def: number) =>
  z.coerce.number().int().positive().max(31_536_000).default(def).describe('a whole number of seconds from 1 to 31536000')
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values).describe(`one of ${values.join(', ')}`)
const httpUrl = () => z.url({ protocol: /^https?$/ }).describe('an http:// or https:// URL')

/** Failures before a lockout or block. */
const count = (def: number) => int(1, 1000, def)
/** Requests per minute per source address; 0 turns the limit off. */
const perMinute = (def: number) => int(0, 100_000_000, def)
/** A timeout in seconds; fractions allowed (0.5 is half a second). */
const timeout = (def: number) =>
  z.coerce.number().positive().max(3600).default(def).describe('a number of seconds above 0 and at most 3600 (fractions allowed)')

/**
 * Every replica reloads the signing keys this often (src/keys/key-service.ts). A new key must be
 * published this long plus the JWKS cache lifetime before it signs (KEY_ACTIVATION_DELAY).
 */
export const KEY_RELOAD_SECONDS = 60

export type TrustProxy = boolean | string[]

/** proxy-addr's names for ranges, as Fastify's trustProxy accepts them. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** true, false, or the list of trusted proxies; undefined when malformed. */
export function parseTrustProxy(raw: string): TrustProxy | undefined {
  const v = raw.trim()
  if (v === 'true') return true
  if (v === 'false') return false
  const entries = v.split(',').map((s) => s.trim())
  const valid = (entry: string) => {
    if (RANGE_NAMES.has(entry)) return true
    const [addr, bits, ...rest] = entry.split('/')
    const family = isIP(addr ?? '')
    if (family === 0 || rest.length > 0) return false
    if (bits === undefined) return true
    return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
  }
  return entries.length > 0 && entries.every(valid) ? entries : undefined
}

/** PostgreSQL's size notation (`128kB`, `16MB`, `1GB`) in KiB; undefined when malformed. */
function sizeInKiB(v: string): number | undefined {
  const m = /^(\d{1,7})(kB|MB|GB)$/.exec(v)
  return m ? Number(m[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[m[2] as 'kB' | 'MB' | 'GB'] : undefined
}

export const SIGNING_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const
export type SigningAlg = (typeof SIGNING_ALGS)[number]
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const LOG_FORMATS = ['json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

/** Variables whose value never appears in an error message (DATABASE_URL: its password). */
const SECRET_VARIABLES = new Set(['KEY_ENCRYPTION_SECRET', 'CIBA_NOTIFICATION_SECRET', 'DATABASE_URL'])

/** The issuer is an origin: every endpoint is served at a fixed path under it (no path prefix). */
const issuerUrl = httpUrl()
  .refine((v) => {
    const u = new URL(v)
    return u.pathname === '/' && u.search === '' && u.hash === ''
  })
  .describe(
    'an http:// or https:// URL without a path, query or fragment, such as https://id.example.com (every endpoint is served at the root)',
  )

/** An https:// URL, or a path on this origin (served by the proxy in front, say): never data: or plain http. */
const logoUrl = z
  .string()
  .max(2000)
  .refine((v) => {
    if (/^\/(?![/\\])[^\s\\]*$/.test(v)) return true
    try {
      return new URL(v).protocol === 'https:' && !/\s/.test(v)
    } catch {
      return false
    }
  })
  .describe('an https:// URL or a path starting with a single /, such as https://cdn.example.com/logo.svg or /brand/logo.svg')

const Env = z.object({
  PORT: int(0, 65535, 5000),
  HOST: z.string().min(1).default('127.0.0.1').describe('an interface address or host name'),
  ISSUER: issuerUrl.optional(),
  DOCUMENTATION_URL: httpUrl().optional(),
  PAR_REQUIRED: z.enum(['true', 'false']).default('false').describe('true or false'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//)
    .optional()
    .describe('a postgres:// or postgresql:// URL'),
  DATABASE_POOL_SIZE: int(1, 200, 10),
  DATA_DIR: z.string().min(1).default('./data').describe('a directory path'),
  EMBEDDED_SHARED_BUFFERS: z
    .string()
    .default('16MB')
    .refine((v) => {
      const kB = sizeInKiB(v)
      return kB !== undefined && kB >= 128 && kB <= 1024 * 1024
    })
    .describe('a size from 128kB to 1GB, such as 16MB or 256MB'),
  SEED_FILE: z.string().min(1).optional().describe('a file path'),
  DEMO_SEED: z.enum(['true', 'false']).optional().describe('true or false'),
  LOG_LEVEL: oneOf(LOG_LEVELS).default('info'),
  LOG_FORMAT: oneOf(LOG_FORMATS).optional(),
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform(parseTrustProxy)
    .refine((v) => v !== undefined)
    .describe('true, false, or a comma-separated list of proxy addresses and networks (10.0.0.0/8, ::1, loopback)'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional().describe('an integer from 0 to 65535'),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').describe('an interface address or host name'),
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).optional().describe('an integer from 0 to 65535'),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1').describe('an interface address or host name'),
  KEY_ENCRYPTION_SECRET: z.string().min(16).optional().describe('at least 16 characters long'),
  KEY_ACTIVATION_DELAY: z.coerce
    .number()
    .int()
    .min(KEY_RELOAD_SECONDS)
    .max(31_536_000)
    .default(3600)
    .describe(`an integer from ${KEY_RELOAD_SECONDS} to 31536000 (replicas reload keys every ${KEY_RELOAD_SECONDS} s)`),
  ACCESS_TOKEN_SIGNING_ALG: oneOf(SIGNING_ALGS).default('ES256'),
  ACCESS_TOKEN_LIFETIME: seconds(3600),
  ID_TOKEN_LIFETIME: seconds(300),
  PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME: seconds(86_400),
  AUTHORIZATION_CODE_LIFETIME: z.coerce.number().int().positive().max(600).default(300), // RFC 6749 §4.1.2: at most 10 minutes
  DPOP_NONCE_REQUIRED: z.enum(['true', 'false']).default('false').describe('true or false'),
  CIBA_DEFAULT_LIFETIME: seconds(300),
  CIBA_POLLING_INTERVAL: seconds(5),
  CIBA_MAX_PENDING_PER_USER: int(0, 100_000, 10), // per client and user; 0: no cap
  CIBA_RATE_LIMIT_PER_USER: int(0, 100_000, 5), // requests per client and user in any 60 s; 0: off
  CIBA_MIN_REQUESTED_EXPIRY: seconds(10),
  CIBA_NOTIFICATION_URL: httpUrl().optional(),
  CIBA_NOTIFICATION_SECRET: z.string().min(1).optional().describe('a non-empty secret'),
  DEVICE_CODE_LIFETIME: seconds(300),
  DEVICE_POLLING_INTERVAL: seconds(5),
  DEVICE_MAX_PENDING_PER_CLIENT: int(0, 1_000_000, 1000), // per client; 0: no cap
  DEVICE_MAX_PENDING_PER_ADDRESS: int(0, 1_000_000, 10), // per client and requesting address; 0: no cap
  CLIENT_CACHE_TTL: int(0, 3600, 5),
  CLIENT_CACHE_MAX_STALE: int(0, 86_400, 300),
  SHUTDOWN_TIMEOUT: seconds(10),
  SHUTDOWN_DRAIN: z.coerce.number().min(0).max(3600).default(5).describe('a number of seconds from 0 to 3600 (fractions allowed)'),
  HTTP_HEADERS_TIMEOUT: timeout(10),
  HTTP_REQUEST_TIMEOUT: timeout(30),
  HTTP_KEEP_ALIVE_TIMEOUT: timeout(72),
  HTTP_MAX_CONNECTIONS: int(0, 1_000_000, 4096),
  DATABASE_CONNECT_TIMEOUT: timeout(5),
  DATABASE_QUERY_TIMEOUT: timeout(5),
  LOCKOUT_THRESHOLD: count(10),
  PASSWORD_HASH_COST: int(10, 20, 14),
  LOCKOUT_DURATION: seconds(300),
  LOCKOUT_MAX_DURATION: seconds(86_400),
  CLIENT_AUTH_FAILURE_LIMIT: count(10),
  CLIENT_AUTH_BLOCK_DURATION: seconds(60),
  CLIENT_AUTH_BLOCK_MAX_DURATION: seconds(3600),
  USER_CODE_FAILURE_LIMIT: count(5),
  USER_CODE_BLOCK_DURATION: seconds(300),
  RATE_LIMIT_SIGN_IN: perMinute(60),
  RATE_LIMIT_API: perMinute(60_000),
  SESSION_IDLE_TIMEOUT: seconds(1800),
  SESSION_LIFETIME: seconds(36_000),
  PASSKEYS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('true or false'),
  BRAND_NAME: z
    .string()
    .max(60)
    .regex(/^[^\p{Cc}]*$/u)
    .optional()
    .describe('at most 60 characters without control characters'),
  BRAND_LOGO_URL: logoUrl.optional(),
  BRAND_PRIMARY_COLOR: z.string().regex(HEX_COLOUR).optional().describe('a colour as #rrggbb, such as #0b57d0'),
  BRAND_SUPPORT_URL: z
    .url({ protocol: /^(https?|mailto)$/ })
    .optional()
    .describe('an https://, http:// or mailto: URL'),
  REGISTRATION: oneOf(['off', 'open', 'token'] as const).default('off'),
  REGISTRATION_ALLOWED_SCOPES: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/)
    .default('openid profile email offline_access')
    .describe('scope values separated by single spaces'),
  RATE_LIMIT_REGISTRATION: perMinute(20),
  REGISTERED_CLIENT_IDLE_LIFETIME: seconds(2_592_000),
  CLIENT_ID_METADATA_DOCUMENTS: z.enum(['true', 'false']).default('false').describe('true or false'),
})

/** The sections of docs/configuration.md, in their order. */
export const CONFIG_GROUPS = [
  'Server',
  'Database',
  'Seed',
  'Logs, proxies and metrics',
  'Admin API',
  'Signing keys',
  'Token lifetimes',
  'DPoP',
  'CIBA',
  'Device flow',
  'Caches',
  'HTTP server and shutdown',
  'Lockout and throttling',
  'Sign-in sessions',
  'Branding',
  'Client registration',
  'Client ID Metadata Documents',
] as const
export type ConfigGroup = (typeof CONFIG_GROUPS)[number]

/** What a variable is for, as docs/configuration.md shows it (Markdown; links are relative to docs/). */
interface VariableDoc {
  readonly group: ConfigGroup
  /** What the variable means: one sentence or more. */
  readonly doc: string
  /** The default, where it is not a value of the schema (it depends on other variables). */
  readonly default?: string
  /** What the value must be, where the schema's .describe() does not say it. */
  readonly accepts?: string
}

/**
 * The meaning of every variable, beside the schema: the mapped type makes the type checker refuse
 * a variable of Env without an entry (and an entry for no variable). `npm run docs` writes
 * docs/configuration.md from this, in this order.
 */
const VARIABLE_DOCS: { readonly [K in keyof typeof Env.shape]: VariableDoc } = {
  PORT: { group: 'Server', doc: 'The TCP port the server listens on.' },
  HOST: {
    group: 'Server',
    doc: 'The interface the server listens on: by default this machine only. `0.0.0.0`: every IPv4 interface, as a container needs (the image sets it) and a server others reach directly.',
  },
  ISSUER: {
    group: 'Server',
    default: '`http://localhost:$PORT`',
    doc: 'The issuer identifier (`iss`) and base of every URL in discovery. Behind a reverse proxy, set the public URL, e.g. `https://id.example.com`. Every endpoint is served at the root, so an issuer with a path (`https://example.com/auth`) is refused at start-up: give the server its own host name.',
  },
  DOCUMENTATION_URL: {
    group: 'Server',
    doc: "Where the landing page's (`/`) Documentation link leads: your developer portal, or the published documentation of authz. Unset: the page points developers to the `docs/` folder of the authz source.",
  },
  PAR_REQUIRED: {
    group: 'Server',
    doc: '`true`: every authorization request must come through the pushed authorization request endpoint (RFC 9126 §5; discovery says `require_pushed_authorization_requests`); one sent to the authorization endpoint directly is refused with `invalid_request`. `false`: only clients with `requirePushedAuthorization` must (see [Pushed authorization requests](fapi.md#pushed-authorization-requests-and-request-objects)).',
  },
  DATABASE_URL: {
    group: 'Database',
    doc: 'The PostgreSQL database, e.g. `postgres://user:pass@host:5432/db`. Unset: embedded PGlite in `DATA_DIR`.',
  },
  DATABASE_POOL_SIZE: { group: 'Database', doc: 'The most connections the pg pool opens to `DATABASE_URL`.' },
  DATABASE_CONNECT_TIMEOUT: {
    group: 'Database',
    doc: 'The longest wait for a database connection (a free one from the pool, or a new one).',
  },
  DATABASE_QUERY_TIMEOUT: {
    group: 'Database',
    doc: 'The longest wait for one statement; the connection is then discarded. A request whose database wait runs out, or that finds the database unreachable, is answered `503` `temporarily_unavailable` with `Retry-After` (OAuth JSON), and `/health/ready` answers `503` within a second. While the database is unreachable, one request a second tries it and the others are answered `503` at once, without waiting. An outage is logged once when it begins (`database unavailable…`, level error) and once when it ends (`database available again`, with the count of failed operations and its length), never per request.',
  },
  DATA_DIR: {
    group: 'Database',
    doc: 'Where the embedded database lives (only without `DATABASE_URL`). One process at a time: the server and the CLI lock it. Created `0700` with files `0600`; a directory that group or others may enter stops start-up (`chmod -R go-rwx DIR`).',
  },
  EMBEDDED_SHARED_BUFFERS: {
    group: 'Database',
    doc: "The embedded database's page cache (PostgreSQL's `shared_buffers`; only without `DATABASE_URL`). It is resident in full, so it is most of what the embedded server costs in memory; 16MB holds the token and session tables of a development or small deployment. Raise it when the tables outgrow it (reads then go to the files), or move to PostgreSQL.",
  },
  SEED_FILE: {
    group: 'Seed',
    doc: 'A [seed file](seed-file.md) applied at every start (idempotent), read and checked before anything is migrated: an invalid file changes nothing.',
  },
  DEMO_SEED: {
    group: 'Seed',
    default: '`true` without `DATABASE_URL`, else `false`',
    doc: '`true`: apply `seed/demo.json` to a database that this start creates (never with `SEED_FILE`). The container image sets `false`.',
  },
  LOG_LEVEL: {
    group: 'Logs, proxies and metrics',
    doc: 'The least severe log lines written. Logs are JSON lines (pino) with a request id; [audit events](operate.md#audit-events) are written at `info` and `warn`.',
  },
  LOG_FORMAT: {
    group: 'Logs, proxies and metrics',
    default: '`pretty` when standard output is a terminal, else `json`',
    doc: '`json`: one JSON object per line (pino), for log collectors. `pretty`: for a person at a terminal, one short coloured line per request (`POST /connect/token 200 4 ms`), audit events marked `AUDIT`, the CIBA approval URL and the device verification URL printed as they are (see [Logs](operate.md#logs)); colours only on a terminal, never with `NO_COLOR`. The container image sets `json`.',
  },
  TRUST_PROXY: {
    group: 'Logs, proxies and metrics',
    doc: "Whose `X-Forwarded-For` and `X-Forwarded-Proto` to believe (see [Behind a reverse proxy](operate.md#behind-a-reverse-proxy)): `false` nobody's; a comma-separated list of the proxies' addresses and networks (`10.0.0.0/8, 192.0.2.10, loopback`): theirs only; `true` anyone's.",
  },
  METRICS_PORT: {
    group: 'Logs, proxies and metrics',
    doc: 'Serve [Prometheus metrics](operate.md#metrics) at `GET /metrics` on this port, a listener of its own. Unset: no metrics are collected.',
  },
  METRICS_HOST: {
    group: 'Logs, proxies and metrics',
    doc: 'Interface of the metrics listener. Set `0.0.0.0` only where the port is reachable by your Prometheus and nobody else (a cluster network, not the internet).',
  },
  ADMIN_PORT: {
    group: 'Admin API',
    doc: 'Serve the [admin API](admin-api.md) on this port, a listener of its own (never the public one). Every request needs an access token of this server with the scope `authz:admin` (or `authz:admin:read` for reads), which no client has unless its `allowedScopes` lists it. Unset: no admin API.',
  },
  ADMIN_HOST: {
    group: 'Admin API',
    doc: 'Interface of the admin listener. Set `0.0.0.0` only where the port is reachable by your operators and automation and nobody else.',
  },
  KEY_ENCRYPTION_SECRET: {
    group: 'Signing keys',
    doc: "Encrypts the signing keys' private parts and the server secrets (CSRF tokens, the authorization endpoint's sign-in marker, the digest of unknown usernames) in the database (AES-256-GCM, key derived with HKDF-SHA256). Every replica and the CLI need the same value; with keys stored encrypted and this missing or wrong, start-up fails. A warning is logged when this is not set. Keys and secrets stored unencrypted before it was set are replaced at the next start, not encrypted in place: see docs/operate.md, Setting KEY_ENCRYPTION_SECRET later.",
  },
  KEY_ACTIVATION_DELAY: {
    group: 'Signing keys',
    doc: `After \`authz keys rotate\`, how long a new key is published before it signs, so every cache of our JWKS has it first. At least \`${KEY_RELOAD_SECONDS}\`: a replica publishes a new key at its next key reload (every ${KEY_RELOAD_SECONDS} s), and the JWKS and discovery documents may be cached for what the delay leaves after that, \`Cache-Control: max-age\` = min(300, delay − ${KEY_RELOAD_SECONDS}) (so \`90\` gives 30 s, \`360\` and more 300 s). A verifier that respects max-age then always holds the key before the first token it signs.`,
  },
  ACCESS_TOKEN_SIGNING_ALG: {
    group: 'Signing keys',
    doc: 'The signing algorithm of access tokens and introspection JWTs. ID tokens use RS256 (ES256 for clients of the fapi2 profile).',
  },
  ACCESS_TOKEN_LIFETIME: { group: 'Token lifetimes', doc: "Default access token lifetime; a client's `accessTokenLifetime` overrides it." },
  ID_TOKEN_LIFETIME: { group: 'Token lifetimes', doc: 'How long an ID token is valid (its `exp`).' },
  PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME: {
    group: 'Token lifetimes',
    doc: "The longest absolute lifetime of a [public client's](security.md#public-clients) refresh tokens: the smaller of this and the client's `absoluteRefreshTokenLifetime` (whose `0`, no bound, gives this), counted from the family's first refresh token and kept across rotations (also for a family that began while the client was confidential or the value was higher); a sliding lifetime never goes past it. Confidential clients keep their own.",
  },
  AUTHORIZATION_CODE_LIFETIME: {
    group: 'Token lifetimes',
    accepts: 'a whole number of seconds from 1 to 600',
    doc: 'How long an authorization code may be redeemed (at most 600, RFC 6749 §4.1.2).',
  },
  DPOP_NONCE_REQUIRED: {
    group: 'DPoP',
    doc: "Every DPoP proof (RFC 9449) must carry a nonce of this server: a proof without one, or with one older than 5 to 10 minutes, is answered `use_dpop_nonce` with a fresh nonce in the `DPoP-Nonce` header (§8), which the client sends again. Nonces are MACs of the time with a server secret, so every replica accepts every other's without sharing state. `false`: proofs need no nonce, and their `iat` (within 60 s of the server's clock) and single-use `jti` bound their replay.",
  },
  CIBA_DEFAULT_LIFETIME: {
    group: 'CIBA',
    doc: 'CIBA request lifetime (`expires_in`) and cap of `requested_expiry`, unless the client sets `cibaLifetime`.',
  },
  CIBA_POLLING_INTERVAL: { group: 'CIBA', doc: 'CIBA minimum polling interval, unless the client sets `pollingInterval`.' },
  CIBA_MAX_PENDING_PER_USER: {
    group: 'CIBA',
    doc: 'Pending (undecided, unexpired) CIBA requests one client may have for one user; one more is `403 access_denied`. Counted per client and user, so no client can keep the others from reaching a user. `0`: no cap.',
  },
  CIBA_RATE_LIMIT_PER_USER: {
    group: 'CIBA',
    doc: 'CIBA requests one client may make for one user in any 60 seconds, whatever became of them; one more is `403 access_denied` with `Retry-After` (when the next is accepted). The pending cap bounds how many wait at once, this how fast notifications reach the user. `0`: off.',
  },
  CIBA_MIN_REQUESTED_EXPIRY: {
    group: 'CIBA',
    doc: "The least `requested_expiry` a CIBA request may ask for (a shorter one is `400 invalid_request`), or the client's lifetime when that is shorter. Without it a client could let each request lapse at once and send the next, so that the pending cap never fills.",
  },
  CIBA_NOTIFICATION_URL: {
    group: 'CIBA',
    doc: "Webhook that tells the user's device about a CIBA request (Standard Webhooks). Unset: the approval URL is logged.",
  },
  CIBA_NOTIFICATION_SECRET: {
    group: 'CIBA',
    doc: "Required with `CIBA_NOTIFICATION_URL`: the webhook's HMAC key. `whsec_<base64>` (as Standard Webhooks libraries generate) uses the decoded bytes; any other value its UTF-8 bytes.",
  },
  DEVICE_CODE_LIFETIME: {
    group: 'Device flow',
    doc: 'Device flow (RFC 8628): how long a `device_code` and its user code are valid (`expires_in`).',
  },
  DEVICE_POLLING_INTERVAL: {
    group: 'Device flow',
    doc: 'Device flow: the minimum polling interval (`interval`), unless the client sets `pollingInterval`.',
  },
  DEVICE_MAX_PENDING_PER_CLIENT: {
    group: 'Device flow',
    doc: "Device flow: pending (undecided, unexpired) device authorizations one client may have; one more is `429 temporarily_unavailable` with `Retry-After` (when the client's oldest pending one expires). Anyone who knows a public client's id can use up its places from as many addresses as this divided by `DEVICE_MAX_PENDING_PER_ADDRESS`: size it above the client's real peak. `0`: no cap.",
  },
  DEVICE_MAX_PENDING_PER_ADDRESS: {
    group: 'Device flow',
    doc: "Device flow: pending device authorizations one client may have from one requesting address (as rate limiting sees it, with `TRUST_PROXY`; an IPv6 /64 counts as one), so that one address cannot fill `DEVICE_MAX_PENDING_PER_CLIENT`; one more is `429 temporarily_unavailable` with `Retry-After` (when that address's oldest pending one for the client expires). Raise it when many devices share one address (a NAT, a carrier-grade NAT). `0`: no cap.",
  },
  CLIENT_CACHE_TTL: {
    group: 'Caches',
    doc: 'How long a replica keeps clients, API resources and whether a user is enabled in memory. A change committed by anyone (seed file, CLI, SQL by hand) is seen by every replica at once through a PostgreSQL notification; this is the bound for a notification that is missed. `0` disables the cache.',
  },
  CLIENT_CACHE_MAX_STALE: {
    group: 'Caches',
    doc: "While the database cannot be reached, how long past `CLIENT_CACHE_TTL` a replica goes on using the client and API resource records (and the users' enabled flags) it loaded before: JWT access tokens for those clients are still issued (and JWTs of those clients and users still introspected), so an outage shorter than this does not stop them. A change made just before an outage may take this much longer to be seen. What needs the database (reference and refresh tokens, CIBA, sign-in, clients or users not loaded before) answers `503`. `0`: no stale records.",
  },
  HTTP_HEADERS_TIMEOUT: {
    group: 'HTTP server and shutdown',
    doc: 'A client must send the request line and headers within this long, or gets `408` (OAuth JSON) and is disconnected.',
  },
  HTTP_REQUEST_TIMEOUT: {
    group: 'HTTP server and shutdown',
    doc: 'A client must send the whole request, body included, within this long, or gets `408` (OAuth JSON) and is disconnected. Not less than `HTTP_HEADERS_TIMEOUT`.',
  },
  HTTP_KEEP_ALIVE_TIMEOUT: {
    group: 'HTTP server and shutdown',
    doc: "An idle keep-alive connection is closed after this long. Behind a reverse proxy keep it above the proxy's own idle timeout for upstream connections (60 s for most load balancers), so that the proxy, not the server, closes idle connections.",
  },
  HTTP_MAX_CONNECTIONS: {
    group: 'HTTP server and shutdown',
    doc: "Open connections the listener accepts; further ones are refused at once until some close, so held sockets cannot exhaust the process's file descriptors. Keep it below `ulimit -n`. `0`: no cap.",
  },
  SHUTDOWN_TIMEOUT: {
    group: 'HTTP server and shutdown',
    doc: 'On SIGTERM/SIGINT the server drains (`SHUTDOWN_DRAIN`), stops accepting, lets in-flight requests finish, closes the database and exits, all within this long of the signal; otherwise it exits 1.',
  },
  SHUTDOWN_DRAIN: {
    group: 'HTTP server and shutdown',
    doc: 'After SIGTERM/SIGINT, how long the server keeps answering, every answer with `Connection: close`, while `/health/ready` answers 503, so that a proxy moves its traffic and keep-alive clients leave without a reset. At most half of `SHUTDOWN_TIMEOUT`; `0` stops accepting at once.',
  },
  PASSWORD_HASH_COST: {
    group: 'Lockout and throttling',
    doc: 'The scrypt cost of new password and CIBA user code hashes: N = 2^cost, with r = 8 and p = 1 (each check takes 128 × 2^cost bytes of memory: 16 MiB at 14). A stored hash keeps the cost it was made with, so raising it applies to passwords set from then on. Below 14 only for tests.',
  },
  LOCKOUT_THRESHOLD: {
    group: 'Lockout and throttling',
    doc: 'Failed password checks in a row that lock an account (see [Lockout and throttling](security.md#lockout-and-throttling)).',
  },
  LOCKOUT_DURATION: { group: 'Lockout and throttling', doc: 'The first lock of an account; each further lock doubles it.' },
  LOCKOUT_MAX_DURATION: {
    group: 'Lockout and throttling',
    doc: 'The longest lock (also of `user_code` blocks); failures and the doubling are forgotten this long after the last failure (or its lock).',
  },
  CLIENT_AUTH_FAILURE_LIMIT: {
    group: 'Lockout and throttling',
    doc: 'Failed client (or API) authentications in a row from one address that block that client from that address.',
  },
  CLIENT_AUTH_BLOCK_DURATION: {
    group: 'Lockout and throttling',
    doc: 'The first block of a client and address; each further block doubles it.',
  },
  CLIENT_AUTH_BLOCK_MAX_DURATION: {
    group: 'Lockout and throttling',
    doc: 'The longest block of a client and address; also how long failures are remembered.',
  },
  USER_CODE_FAILURE_LIMIT: {
    group: 'Lockout and throttling',
    doc: "Wrong CIBA `user_code` values in a row from one client for one user before that client's requests for that user are refused; also wrong device user codes typed at `/device` from one address before that address is blocked.",
  },
  USER_CODE_BLOCK_DURATION: {
    group: 'Lockout and throttling',
    doc: 'The first block for wrong user codes (`USER_CODE_FAILURE_LIMIT`); each further one doubles it, up to `LOCKOUT_MAX_DURATION`.',
  },
  RATE_LIMIT_SIGN_IN: {
    group: 'Lockout and throttling',
    doc: 'Sign-in POSTs per minute per source address, per replica (in memory); the same limit applies to the device page (`/device`, GET and POST) and to starting a sign-in at an identity provider (`/federation/{scheme}/challenge`). `0`: off.',
  },
  RATE_LIMIT_API: {
    group: 'Lockout and throttling',
    doc: 'Requests per minute per source address to each of the token, introspection, revocation, CIBA, device authorization and userinfo endpoints, per replica (in memory). `0`: off.',
  },
  SESSION_IDLE_TIMEOUT: {
    group: 'Sign-in sessions',
    doc: 'A sign-in session ends this long after its last use (30 minutes; see [Sign-in, sessions and forms](security.md#sign-in-sessions-and-forms)).',
  },
  SESSION_LIFETIME: {
    group: 'Sign-in sessions',
    doc: 'A sign-in session ends this long after the sign-in at the latest, however often it is used (10 hours: a working day). Not less than `SESSION_IDLE_TIMEOUT`.',
  },
  PASSKEYS: {
    group: 'Sign-in sessions',
    doc: "Offer passkeys (WebAuthn): people add them on their account page and sign in with one, without a password, or use one as the second factor after a password (see [Passkeys](passkeys-and-second-factors.md#passkeys)). The relying-party id is the issuer's host, so an issuer on an IP address cannot offer them: the server says so at start and the pages leave them out. WebAuthn needs JavaScript: with `true` the sign-in, account and passkey pages load one script from this server (`script-src 'self'`, nothing inline); with `false`, the default, no page carries a script and no passkey is offered or accepted.",
  },
  BRAND_NAME: {
    group: 'Branding',
    default: "the issuer's host",
    doc: 'The product name at the top of every page a person sees (sign-in, consent, device, errors) and in their titles. See [Branding and languages](branding.md).',
  },
  BRAND_LOGO_URL: {
    group: 'Branding',
    doc: "A logo shown before the name, 2rem high. A URL's origin (or `'self'` for a path) is added to the pages' `img-src` Content-Security-Policy; nothing else may load images. Unset: no logo.",
  },
  BRAND_PRIMARY_COLOR: {
    group: 'Branding',
    default: '`#0b57d0`',
    doc: 'The colour of buttons, links and the header mark. Buttons carry white text and links sit on white, so a colour with less than 4.5:1 contrast against white (WCAG 2.x) is refused at start-up, with its ratio.',
  },
  BRAND_SUPPORT_URL: {
    group: 'Branding',
    doc: 'A "Help and support" link at the foot of every page. Unset: no link.',
  },
  REGISTRATION: {
    group: 'Client registration',
    doc: 'Dynamic Client Registration (RFC 7591) at `POST /connect/register`, and its management (RFC 7592): `off`: the endpoint answers `404` and discovery has no `registration_endpoint`; `open`: anyone may register a client; `token`: a registration needs an initial access token made with `authz registration-tokens create` (none or a bad one is `401` with a `WWW-Authenticate: Bearer` challenge). See [Client registration](registration.md).',
  },
  REGISTRATION_ALLOWED_SCOPES: {
    group: 'Client registration',
    doc: 'The scopes a client nobody configured may ask for (space-separated): a registered client (a request for any other is refused with `invalid_client_metadata`; a registration without `scope` gets all of them) and a Client ID Metadata Document (a document whose `scope` names any other is refused; one without `scope` may ask for all of them). The admin scopes `authz:admin` and `authz:admin:read` may not be listed: the server refuses to start.',
  },
  RATE_LIMIT_REGISTRATION: {
    group: 'Client registration',
    doc: 'Registrations (`POST /connect/register`) per minute per source address, per replica (in memory); one more is `429`. `0`: off.',
  },
  REGISTERED_CLIENT_IDLE_LIFETIME: {
    group: 'Client registration',
    doc: 'A registered client that has not obtained a token for this long (30 days) is removed by the background cleanup, with its registration: nothing a stranger registers survives unused.',
  },
  CLIENT_ID_METADATA_DOCUMENTS: {
    group: 'Client ID Metadata Documents',
    doc: '`true`: a `client_id` that is an https URL (http only for `localhost`, `*.localhost`, `127.0.0.1` and `[::1]`) names a client described by the JSON document at that URL, as MCP clients use it (see [Protect an MCP server](mcp.md)). The document is fetched whenever the client is looked up and no cached copy is held (at the authorization and pushed authorization request endpoints, wherever a client authenticates: token, revocation, introspection, device authorization, CIBA; for CORS; when a token issued to it is read; at logout): 5 s at most, 64 KiB at most, no redirects, never from a private or link-local address unless the host is a localhost name, at most 10 fetches at once; it is then kept as its `Cache-Control` says within 5 minutes and 24 hours (a failed or refused one for 1 minute), and must describe a public client (`token_endpoint_auth_method` `none`, or `private_key_jwt` with a `jwks_uri`) whose `client_id` is the URL. Such a client must use PKCE, and its person is asked for consent every time. `false`: such a `client_id` is an unknown client and nothing is fetched.',
  },
}

export type Config = Readonly<{
  port: number
  host: string
  issuer: string
  /** The landing page's Documentation link; undefined: the page names the docs/ folder. */
  documentationUrl: string | undefined
  databaseUrl: string | undefined
  databasePoolSize: number
  dataDir: string
  /** shared_buffers of the embedded database, e.g. `16MB`. */
  embeddedSharedBuffers: string
  seedFile: string | undefined
  /** Apply seed/demo.json to a database created by this start (never with SEED_FILE). */
  demoSeed: boolean
  logLevel: (typeof LOG_LEVELS)[number]
  /** json for collectors; pretty for a person at a terminal (src/http/pretty-log.ts). */
  logFormat: LogFormat
  /** Fastify's trustProxy: true (any peer), false, or the proxies' addresses and networks. */
  trustProxy: TrustProxy
  /** The metrics listener (src/observe/metrics-server.ts); undefined: no metrics. */
  metricsPort: number | undefined
  metricsHost: string
  /** The admin API's listener (src/admin/); undefined: none. */
  adminPort: number | undefined
  adminHost: string
  keyEncryptionSecret: string | undefined
  keyActivationDelay: number
  accessTokenSigningAlg: SigningAlg
  accessTokenLifetime: number
  idTokenLifetime: number
  /** Seconds: the longest absolute lifetime of a public client's refresh tokens (src/domain/public-client.ts). */
  publicClientRefreshTokenLifetime: number
  /** Seconds an authorization code may be redeemed (RFC 6749 §4.1.2). */
  authorizationCodeLifetime: number
  /** Every authorization request must be pushed (RFC 9126 §5), whatever the client's requirePushedAuthorization. */
  parRequired: boolean
  /** RFC 9449 §8: every DPoP proof must carry a server nonce (src/tokens/dpop.ts). */
  dpopNonceRequired: boolean
  cibaDefaultLifetime: number
  cibaPollingInterval: number
  /** Pending CIBA requests one client may have for one user; 0: no cap. */
  cibaMaxPendingPerUser: number
  /**
   * Requests one client may make for one user in any 60 s (src/flows/ciba/service.ts); 0: no
   * limit. The pending cap bounds how many wait at once, this how fast they come.
   */
  cibaRateLimitPerUser: number
  /** Seconds: the least requested_expiry accepted (never more than the client's lifetime). */
  cibaMinRequestedExpiry: number
  cibaNotificationUrl: string | undefined
  cibaNotificationSecret: string | undefined
  /** RFC 8628 device authorization: device_code lifetime and the default polling interval (s). */
  deviceCodeLifetime: number
  devicePollingInterval: number
  /** Pending (undecided, unexpired) device authorizations one client may have; 0: no cap. */
  deviceMaxPendingPerClient: number
  /** The same, per client and requesting address (an IPv6 /64 counts as one); 0: no cap. */
  deviceMaxPendingPerAddress: number
  clientCacheTtl: number
  /** While the database cannot be reached, cached clients and resources serve this long past their CLIENT_CACHE_TTL. */
  clientCacheMaxStale: number
  shutdownTimeout: number
  /** Seconds between SIGTERM and closing the listener, answering with Connection: close (at most half of shutdownTimeout). */
  shutdownDrain: number
  /** HTTP server bounds (seconds; 0 connections: no cap). */
  httpHeadersTimeout: number
  httpRequestTimeout: number
  httpKeepAliveTimeout: number
  httpMaxConnections: number
  /** Bounds on every database wait (seconds): a connection from the pool or a new one, and one statement. */
  databaseConnectTimeout: number
  databaseQueryTimeout: number
  /** Password lockout (src/interaction/password-check.ts): failures in a row, first and longest lock (s). */
  lockoutThreshold: number
  /** log2 of scrypt's N for new password and user code hashes. */
  passwordHashCost: number
  lockoutDuration: number
  lockoutMaxDuration: number
  /** Per client (or API) and source address (src/client-auth/authenticators.ts). */
  clientAuthFailureLimit: number
  clientAuthBlockDuration: number
  clientAuthBlockMaxDuration: number
  /** CIBA user_code, per client and user; the longest block is lockoutMaxDuration. */
  userCodeFailureLimit: number
  userCodeBlockDuration: number
  /** Requests per minute per source address and replica; 0: off. */
  rateLimitSignIn: number
  rateLimitApi: number
  /** Sign-in session (src/interaction/session.ts): ends after this long unused, and this long after sign-in at the latest. */
  sessionIdleTimeout: number
  sessionLifetime: number
  /** PASSKEYS: passkeys are offered (where the issuer's host can be a WebAuthn relying-party id). */
  passkeys: boolean
  /** The pages' look (src/pages/look.ts); undefined: the neutral default. */
  brandName: string | undefined
  brandLogoUrl: string | undefined
  /** #rrggbb, at least MIN_CONTRAST against white. */
  brandPrimaryColor: string | undefined
  brandSupportUrl: string | undefined
  /** Dynamic Client Registration (src/flows/registration/): off, open to anyone, or with an initial access token. */
  registration: 'off' | 'open' | 'token'
  /** The scopes a registered client may have. */
  registrationAllowedScopes: string[]
  /** Registrations per minute per source address and replica; 0: off. */
  rateLimitRegistration: number
  /** Seconds a registered client may go without obtaining a token before the cleanup removes it. */
  registeredClientIdleLifetime: number
  /** Client ID Metadata Documents: a URL client_id is fetched and described by its document. */
  clientIdMetadataDocuments: boolean
}>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
  }
}

/** How a received value is quoted in an error: secrets are never repeated, a URL's password neither. */
function received(name: string, value: string): string {
  if (name === 'DATABASE_URL') {
    try {
      const u = new URL(value)
      if (u.password) u.password = '***'
      return JSON.stringify(u.toString())
    } catch {
      return `a value of ${value.length} characters`
    }
  }
  if (SECRET_VARIABLES.has(name)) return `a value of ${value.length} characters`
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)
}

/**
 * NAME_FILE=path sets NAME to the file's content (one trailing newline dropped), as Docker and
 * Kubernetes secrets are mounted. Works for every variable of the schema.
 */
function readFileVariables(env: Record<string, string>, problems: string[]): Record<string, string> {
  const out = { ...env }
  for (const name of Object.keys(Env.shape)) {
    const path = env[`${name}_FILE`]
    if (path === undefined) continue
    delete out[`${name}_FILE`]
    if (env[name] !== undefined) {
      problems.push(`${name} and ${name}_FILE must not both be set, got both`)
      continue
    }
    try {
      out[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '')
    } catch (err) {
      problems.push(
        `${name}_FILE must name a readable file, got ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      )
    }
  }
  return out
}

/** The .describe() text of a schema, looked up through .optional(), .default() and .transform(). */
function expectation(schema: z.ZodType | undefined): string | undefined {
  for (let s = schema; s;) {
    if (s.description) return s.description
    const def = s.def as { innerType?: z.ZodType; in?: z.ZodType }
    s = def.innerType ?? def.in
  }
  return undefined
}

/** The default a schema applies, looked up like expectation(); undefined when there is none. */
function schemaDefault(schema: z.ZodType): string | number | boolean | undefined {
  for (let s: z.ZodType | undefined = schema; s;) {
    // Every default of Env is a string, a number or a boolean (an environment variable's value).
    const def = s.def as { type: string; defaultValue?: string | number | boolean; innerType?: z.ZodType; in?: z.ZodType }
    if (def.type === 'default') return def.defaultValue
    s = def.innerType ?? def.in
  }
  return undefined
}

/** One variable as docs/configuration.md shows it; `defaultValue` and `doc` are Markdown. */
export interface ConfigVariable {
  readonly name: string
  readonly group: ConfigGroup
  /** Undefined: unset unless given. */
  readonly defaultValue: string | undefined
  readonly accepts: string
  readonly doc: string
}

/** Every variable of the schema with its default, what it accepts and what it means, in the documented order. */
export function configReference(): ConfigVariable[] {
  return Object.entries(VARIABLE_DOCS).map(([name, entry]) => {
    const schema = Env.shape[name as keyof typeof Env.shape]
    const accepts = entry.accepts ?? expectation(schema)
    if (!accepts) throw new Error(`${name}: neither .describe() nor VARIABLE_DOCS says what it accepts`)
    const value = schemaDefault(schema)
    return {
      name,
      group: entry.group,
      defaultValue: entry.default ?? (value === undefined ? undefined : `\`${String(value)}\``),
      accepts,
      doc: entry.doc,
    }
  })
}

/** Where the process writes: LOG_FORMAT's default depends on it. */
export interface ConfigContext {
  /** Standard output is a terminal (a person reads the logs). */
  terminal?: boolean | undefined
}

/** Parses the environment; throws ConfigError with one sentence per problem, each naming the variable. */
export function loadConfig(env: Record<string, string | undefined>, context: ConfigContext = {}): Config {
  // An empty variable (FOO=) counts as unset, as most twelve-factor tooling expects.
  const cleaned = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''))
  const problems: string[] = []
  const vars = readFileVariables(cleaned, problems)
  const parsed = Env.safeParse(vars)
  if (!parsed.success) {
    const names = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))]
    for (const name of names) {
      const expected = expectation(Env.shape[name as keyof typeof Env.shape]) ?? 'valid'
      problems.push(`${name} must be ${expected}, got ${received(name, vars[name] ?? '')}`)
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems)
  const e = parsed.data
  if (e.HTTP_HEADERS_TIMEOUT > e.HTTP_REQUEST_TIMEOUT) {
    throw new ConfigError([
      `HTTP_REQUEST_TIMEOUT must not be less than HTTP_HEADERS_TIMEOUT (${e.HTTP_HEADERS_TIMEOUT}), got "${e.HTTP_REQUEST_TIMEOUT}"`,
    ])
  }
  if (e.CIBA_NOTIFICATION_URL && !e.CIBA_NOTIFICATION_SECRET) {
    throw new ConfigError(['CIBA_NOTIFICATION_SECRET must be set when CIBA_NOTIFICATION_URL is set, got nothing'])
  }
  for (const [base, max] of [
    ['LOCKOUT_DURATION', 'LOCKOUT_MAX_DURATION'],
    ['CLIENT_AUTH_BLOCK_DURATION', 'CLIENT_AUTH_BLOCK_MAX_DURATION'],
    ['USER_CODE_BLOCK_DURATION', 'LOCKOUT_MAX_DURATION'],
    ['SESSION_IDLE_TIMEOUT', 'SESSION_LIFETIME'],
  ] as const) {
    if (e[base] > e[max]) throw new ConfigError([`${max} must not be less than ${base} (${e[base]}), got "${e[max]}"`])
  }
  // A client nobody configured (a registration, a metadata document) must never be able to ask
  // for the admin API's scopes, which are granted only to clients an operator lists them for.
  const admin = e.REGISTRATION_ALLOWED_SCOPES.split(' ').filter(isAdminScope)
  if (admin.length > 0) {
    throw new ConfigError([
      `REGISTRATION_ALLOWED_SCOPES must not list the admin API's scopes, got ${admin.map((s) => `"${s}"`).join(' and ')}; give them only to clients in the seed file`,
    ])
  }
  const colour = e.BRAND_PRIMARY_COLOR
  if (colour !== undefined && contrastRatio(colour, '#ffffff') < MIN_CONTRAST) {
    const ratio = Math.floor(contrastRatio(colour, '#ffffff') * 100) / 100
    throw new ConfigError([
      `BRAND_PRIMARY_COLOR must have a contrast of at least ${MIN_CONTRAST}:1 against white (WCAG 2.x: buttons carry white text on it, links are set in it on white), got "${colour}" with ${ratio}:1; choose a darker shade`,
    ])
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    issuer: (e.ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    documentationUrl: e.DOCUMENTATION_URL,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    dataDir: e.DATA_DIR,
    embeddedSharedBuffers: e.EMBEDDED_SHARED_BUFFERS,
    seedFile: e.SEED_FILE,
    // Default: only the embedded database of a fresh clone gets the demo, never a real server's.
    demoSeed: !e.SEED_FILE && (e.DEMO_SEED === undefined ? !e.DATABASE_URL : e.DEMO_SEED === 'true'),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (context.terminal ? 'pretty' : 'json'),
    trustProxy: e.TRUST_PROXY,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    keyEncryptionSecret: e.KEY_ENCRYPTION_SECRET,
    keyActivationDelay: e.KEY_ACTIVATION_DELAY,
    accessTokenSigningAlg: e.ACCESS_TOKEN_SIGNING_ALG,
    accessTokenLifetime: e.ACCESS_TOKEN_LIFETIME,
    idTokenLifetime: e.ID_TOKEN_LIFETIME,
    publicClientRefreshTokenLifetime: e.PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME,
    authorizationCodeLifetime: e.AUTHORIZATION_CODE_LIFETIME,
    parRequired: e.PAR_REQUIRED === 'true',
    dpopNonceRequired: e.DPOP_NONCE_REQUIRED === 'true',
    cibaDefaultLifetime: e.CIBA_DEFAULT_LIFETIME,
    cibaPollingInterval: e.CIBA_POLLING_INTERVAL,
    cibaMaxPendingPerUser: e.CIBA_MAX_PENDING_PER_USER,
    cibaRateLimitPerUser: e.CIBA_RATE_LIMIT_PER_USER,
    cibaMinRequestedExpiry: e.CIBA_MIN_REQUESTED_EXPIRY,
    cibaNotificationUrl: e.CIBA_NOTIFICATION_URL,
    cibaNotificationSecret: e.CIBA_NOTIFICATION_SECRET,
    deviceCodeLifetime: e.DEVICE_CODE_LIFETIME,
    devicePollingInterval: e.DEVICE_POLLING_INTERVAL,
    deviceMaxPendingPerClient: e.DEVICE_MAX_PENDING_PER_CLIENT,
    deviceMaxPendingPerAddress: e.DEVICE_MAX_PENDING_PER_ADDRESS,
    clientCacheTtl: e.CLIENT_CACHE_TTL,
    clientCacheMaxStale: e.CLIENT_CACHE_MAX_STALE,
    shutdownTimeout: e.SHUTDOWN_TIMEOUT,
    shutdownDrain: Math.min(e.SHUTDOWN_DRAIN, e.SHUTDOWN_TIMEOUT / 2),
    httpHeadersTimeout: e.HTTP_HEADERS_TIMEOUT,
    httpRequestTimeout: e.HTTP_REQUEST_TIMEOUT,
    httpKeepAliveTimeout: e.HTTP_KEEP_ALIVE_TIMEOUT,
    httpMaxConnections: e.HTTP_MAX_CONNECTIONS,
    databaseConnectTimeout: e.DATABASE_CONNECT_TIMEOUT,
    databaseQueryTimeout: e.DATABASE_QUERY_TIMEOUT,
    lockoutThreshold: e.LOCKOUT_THRESHOLD,
    passwordHashCost: e.PASSWORD_HASH_COST,
    lockoutDuration: e.LOCKOUT_DURATION,
    lockoutMaxDuration: e.LOCKOUT_MAX_DURATION,
    clientAuthFailureLimit: e.CLIENT_AUTH_FAILURE_LIMIT,
    clientAuthBlockDuration: e.CLIENT_AUTH_BLOCK_DURATION,
    clientAuthBlockMaxDuration: e.CLIENT_AUTH_BLOCK_MAX_DURATION,
    userCodeFailureLimit: e.USER_CODE_FAILURE_LIMIT,
    userCodeBlockDuration: e.USER_CODE_BLOCK_DURATION,
    rateLimitSignIn: e.RATE_LIMIT_SIGN_IN,
    rateLimitApi: e.RATE_LIMIT_API,
    sessionIdleTimeout: e.SESSION_IDLE_TIMEOUT,
    sessionLifetime: e.SESSION_LIFETIME,
    passkeys: e.PASSKEYS,
    brandName: e.BRAND_NAME,
    brandLogoUrl: e.BRAND_LOGO_URL,
    brandPrimaryColor: e.BRAND_PRIMARY_COLOR?.toLowerCase(),
    brandSupportUrl: e.BRAND_SUPPORT_URL,
    registration: e.REGISTRATION,
    registrationAllowedScopes: e.REGISTRATION_ALLOWED_SCOPES.split(' '),
    rateLimitRegistration: e.RATE_LIMIT_REGISTRATION,
    registeredClientIdleLifetime: e.REGISTERED_CLIENT_IDLE_LIFETIME,
    clientIdMetadataDocuments: e.CLIENT_ID_METADATA_DOCUMENTS === 'true',
  })
}
