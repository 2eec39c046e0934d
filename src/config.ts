// Environment → frozen Config, validated once. src/main.ts is the only caller with process.env.
// Every entry says what it expects with .describe(): a bad value then reads as one sentence,
// `PORT must be an integer from 0 to 65535, got "abc"` (the helpers below describe themselves).
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { z } from 'zod'

const int = (min: number, max: number, def: number) =>
  z.coerce.number().int().min(min).max(max).default(def).describe(`an integer from ${min} to ${max}`)
const seconds = (def: number) =>
  z.coerce.number().int().positive().max(31_536_000).default(def).describe('a whole number of seconds from 1 to 31536000')
const bool = (def: 'true' | 'false') =>
  z.enum(['true', 'false']).default(def).transform((v) => v === 'true').describe('true or false') // z.coerce.boolean() makes "false" true
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

export const SIGNING_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const
export type SigningAlg = (typeof SIGNING_ALGS)[number]
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** Variables whose value never appears in an error message (DATABASE_URL: its password). */
const SECRET_VARIABLES = new Set(['KEY_ENCRYPTION_SECRET', 'CIBA_NOTIFICATION_SECRET', 'DATABASE_URL'])

/** The issuer is an origin: every endpoint is served at a fixed path under it (no path prefix). */
const issuerUrl = httpUrl()
  .refine((v) => {
    const u = new URL(v)
    return u.pathname === '/' && u.search === '' && u.hash === ''
  })
  .describe('an http:// or https:// URL without a path, query or fragment, such as https://id.example.com (every endpoint is served at the root)')

const Env = z.object({
  PORT: int(0, 65535, 5000),
  HOST: z.string().min(1).default('0.0.0.0').describe('an interface address or host name'),
  ISSUER: issuerUrl.optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//).optional().describe('a postgres:// or postgresql:// URL'),
  DATABASE_POOL_SIZE: int(1, 200, 10),
  DATA_DIR: z.string().min(1).default('./data').describe('a directory path'),
  SEED_FILE: z.string().min(1).optional().describe('a file path'),
  DEMO_SEED: z.enum(['true', 'false']).optional().describe('true or false'),
  LOG_LEVEL: oneOf(LOG_LEVELS).default('info'),
  TRUST_PROXY: z.string().default('false').transform(parseTrustProxy).refine((v) => v !== undefined)
    .describe('true, false, or a comma-separated list of proxy addresses and networks (10.0.0.0/8, ::1, loopback)'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional().describe('an integer from 0 to 65535'),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').describe('an interface address or host name'),
  KEY_ENCRYPTION_SECRET: z.string().min(16).optional().describe('at least 16 characters long'),
  KEY_ACTIVATION_DELAY: z.coerce.number().int().min(KEY_RELOAD_SECONDS).max(31_536_000).default(3600)
    .describe(`an integer from ${KEY_RELOAD_SECONDS} to 31536000 (replicas reload keys every ${KEY_RELOAD_SECONDS} s)`),
  ACCESS_TOKEN_SIGNING_ALG: oneOf(SIGNING_ALGS).default('ES256'),
  ACCESS_TOKEN_LIFETIME: seconds(3600),
  ID_TOKEN_LIFETIME: seconds(300),
  PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME: seconds(86_400),
  AUTHORIZATION_CODE_LIFETIME: z.coerce.number().int().positive().max(600).default(300), // RFC 6749 §4.1.2: at most 10 minutes
  CIBA_DEFAULT_LIFETIME: seconds(300),
  CIBA_POLLING_INTERVAL: seconds(5),
  CIBA_MAX_PENDING_PER_USER: int(0, 100_000, 10), // per client and user; 0: no cap
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
})

export type Config = Readonly<{
  port: number
  host: string
  issuer: string
  databaseUrl: string | undefined
  databasePoolSize: number
  dataDir: string
  seedFile: string | undefined
  /** Apply seed/demo.json to a database created by this start (never with SEED_FILE). */
  demoSeed: boolean
  logLevel: (typeof LOG_LEVELS)[number]
  /** Fastify's trustProxy: true (any peer), false, or the proxies' addresses and networks. */
  trustProxy: TrustProxy
  /** The metrics listener (src/observe/metrics-server.ts); undefined: no metrics. */
  metricsPort: number | undefined
  metricsHost: string
  keyEncryptionSecret: string | undefined
  keyActivationDelay: number
  accessTokenSigningAlg: SigningAlg
  accessTokenLifetime: number
  idTokenLifetime: number
  /** Seconds: the longest absolute lifetime of a public client's refresh tokens (src/domain/public-client.ts). */
  publicClientRefreshTokenLifetime: number
  /** Seconds an authorization code may be redeemed (RFC 6749 §4.1.2). */
  authorizationCodeLifetime: number
  cibaDefaultLifetime: number
  cibaPollingInterval: number
  /** Pending CIBA requests one client may have for one user; 0: no cap. */
  cibaMaxPendingPerUser: number
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
      problems.push(`${name}_FILE must name a readable file, got ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`)
    }
  }
  return out
}

/** The .describe() text of a schema, looked up through .optional(), .default() and .transform(). */
function expectation(schema: z.ZodType | undefined): string | undefined {
  for (let s = schema; s; ) {
    if (s.description) return s.description
    const def = s.def as { innerType?: z.ZodType; in?: z.ZodType }
    s = def.innerType ?? def.in
  }
  return undefined
}

/** Parses the environment; throws ConfigError with one sentence per problem, each naming the variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
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
    throw new ConfigError([`HTTP_REQUEST_TIMEOUT must not be less than HTTP_HEADERS_TIMEOUT (${e.HTTP_HEADERS_TIMEOUT}), got "${e.HTTP_REQUEST_TIMEOUT}"`])
  }
  if (e.CIBA_NOTIFICATION_URL && !e.CIBA_NOTIFICATION_SECRET) {
    throw new ConfigError(['CIBA_NOTIFICATION_SECRET must be set when CIBA_NOTIFICATION_URL is set, got nothing'])
  }
  for (const [base, max] of [['LOCKOUT_DURATION', 'LOCKOUT_MAX_DURATION'], ['CLIENT_AUTH_BLOCK_DURATION', 'CLIENT_AUTH_BLOCK_MAX_DURATION'], ['USER_CODE_BLOCK_DURATION', 'LOCKOUT_MAX_DURATION'], ['SESSION_IDLE_TIMEOUT', 'SESSION_LIFETIME']] as const) {
    if (e[base] > e[max]) throw new ConfigError([`${max} must not be less than ${base} (${e[base]}), got "${e[max]}"`])
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    issuer: (e.ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    dataDir: e.DATA_DIR,
    seedFile: e.SEED_FILE,
    // Default: only the embedded database of a fresh clone gets the demo, never a real server's.
    demoSeed: !e.SEED_FILE && (e.DEMO_SEED === undefined ? !e.DATABASE_URL : e.DEMO_SEED === 'true'),
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY!,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    keyEncryptionSecret: e.KEY_ENCRYPTION_SECRET,
    keyActivationDelay: e.KEY_ACTIVATION_DELAY,
    accessTokenSigningAlg: e.ACCESS_TOKEN_SIGNING_ALG,
    accessTokenLifetime: e.ACCESS_TOKEN_LIFETIME,
    idTokenLifetime: e.ID_TOKEN_LIFETIME,
    publicClientRefreshTokenLifetime: e.PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME,
    authorizationCodeLifetime: e.AUTHORIZATION_CODE_LIFETIME,
    cibaDefaultLifetime: e.CIBA_DEFAULT_LIFETIME,
    cibaPollingInterval: e.CIBA_POLLING_INTERVAL,
    cibaMaxPendingPerUser: e.CIBA_MAX_PENDING_PER_USER,
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
  })
}
