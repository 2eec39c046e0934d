// Environment → frozen Config, validated once. src/main.ts is the only caller with process.env.
import { z } from 'zod'

const seconds = (def: number) => z.coerce.number().int().positive().max(31_536_000).default(def)
const bool = (def: 'true' | 'false') =>
  z.enum(['true', 'false']).default(def).transform((v) => v === 'true') // z.coerce.boolean() makes "false" true

/** Failures before a lockout or block. */
const count = (def: number) => z.coerce.number().int().min(1).max(1000).default(def)
/** Requests per minute per source address; 0 turns the limit off. */
const perMinute = (def: number) => z.coerce.number().int().min(0).max(100_000_000).default(def)

export const SIGNING_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const
export type SigningAlg = (typeof SIGNING_ALGS)[number]

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(5000),
  HOST: z.string().min(1).default('0.0.0.0'),
  ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://').optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DATA_DIR: z.string().min(1).default('./data'),
  SEED_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: bool('false'),
  KEY_ENCRYPTION_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  KEY_ACTIVATION_DELAY: z.coerce.number().int().min(0).max(31_536_000).default(3600),
  ACCESS_TOKEN_SIGNING_ALG: z.enum(SIGNING_ALGS).default('ES256'),
  ACCESS_TOKEN_LIFETIME: seconds(3600),
  ID_TOKEN_LIFETIME: seconds(300),
  CIBA_DEFAULT_LIFETIME: seconds(300),
  CIBA_POLLING_INTERVAL: seconds(5),
  CIBA_MAX_PENDING_PER_USER: z.coerce.number().int().min(0).max(100_000).default(10), // per client and user; 0: no cap
  CIBA_NOTIFICATION_URL: z.url({ protocol: /^https?$/ }).optional(),
  CIBA_NOTIFICATION_SECRET: z.string().min(1).optional(),
  DEVICE_CODE_LIFETIME: seconds(300),
  DEVICE_POLLING_INTERVAL: seconds(5),
  CLIENT_CACHE_TTL: z.coerce.number().int().min(0).max(3600).default(5),
  SHUTDOWN_TIMEOUT: seconds(10),
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
  logLevel: z.infer<typeof Env>['LOG_LEVEL']
  trustProxy: boolean
  keyEncryptionSecret: string | undefined
  keyActivationDelay: number
  accessTokenSigningAlg: SigningAlg
  accessTokenLifetime: number
  idTokenLifetime: number
  cibaDefaultLifetime: number
  cibaPollingInterval: number
  /** Pending CIBA requests one client may have for one user; 0: no cap. */
  cibaMaxPendingPerUser: number
  cibaNotificationUrl: string | undefined
  cibaNotificationSecret: string | undefined
  /** RFC 8628 device authorization: device_code lifetime and the default polling interval (s). */
  deviceCodeLifetime: number
  devicePollingInterval: number
  clientCacheTtl: number
  shutdownTimeout: number
  /** Password lockout (src/services/password-check.ts): failures in a row, first and longest lock (s). */
  lockoutThreshold: number
  lockoutDuration: number
  lockoutMaxDuration: number
  /** Per client (or API) and source address (src/http/client-auth.ts). */
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

/** Parses the environment; throws ConfigError with one line per problem, each naming the variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable (FOO=) counts as unset, as most twelve-factor tooling expects.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = Env.safeParse(cleaned)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))
  }
  const e = parsed.data
  if (e.CIBA_NOTIFICATION_URL && !e.CIBA_NOTIFICATION_SECRET) {
    throw new ConfigError(['CIBA_NOTIFICATION_SECRET: required when CIBA_NOTIFICATION_URL is set'])
  }
  for (const [base, max] of [['LOCKOUT_DURATION', 'LOCKOUT_MAX_DURATION'], ['CLIENT_AUTH_BLOCK_DURATION', 'CLIENT_AUTH_BLOCK_MAX_DURATION'], ['USER_CODE_BLOCK_DURATION', 'LOCKOUT_MAX_DURATION'], ['SESSION_IDLE_TIMEOUT', 'SESSION_LIFETIME']] as const) {
    if (e[base] > e[max]) throw new ConfigError([`${max}: must not be less than ${base}`])
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    issuer: (e.ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    dataDir: e.DATA_DIR,
    seedFile: e.SEED_FILE,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    keyEncryptionSecret: e.KEY_ENCRYPTION_SECRET,
    keyActivationDelay: e.KEY_ACTIVATION_DELAY,
    accessTokenSigningAlg: e.ACCESS_TOKEN_SIGNING_ALG,
    accessTokenLifetime: e.ACCESS_TOKEN_LIFETIME,
    idTokenLifetime: e.ID_TOKEN_LIFETIME,
    cibaDefaultLifetime: e.CIBA_DEFAULT_LIFETIME,
    cibaPollingInterval: e.CIBA_POLLING_INTERVAL,
    cibaMaxPendingPerUser: e.CIBA_MAX_PENDING_PER_USER,
    cibaNotificationUrl: e.CIBA_NOTIFICATION_URL,
    cibaNotificationSecret: e.CIBA_NOTIFICATION_SECRET,
    deviceCodeLifetime: e.DEVICE_CODE_LIFETIME,
    devicePollingInterval: e.DEVICE_POLLING_INTERVAL,
    clientCacheTtl: e.CLIENT_CACHE_TTL,
    shutdownTimeout: e.SHUTDOWN_TIMEOUT,
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
