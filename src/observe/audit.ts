// Audit events: one structured log line for every security-relevant outcome, in a stable schema
// an operator can ship to a SIEM (docs/operate.md "Audit events"). Services, grants and routes call
// `audit.emit({ event, ... })`; the sink writes the line and tells its listeners (the metrics).
//
// Schema (version 1): every line carries `"log": "audit"`, `event` and `outcome`, and, when known,
// `client_id`, `subject`, `grant_type`, `address` (the source address, X-Forwarded-For only from a
// trusted proxy) and `request_id`; failures carry `reason`. Event-specific fields are listed in
// AuditDetails. Fields are added, never renamed or removed, within a version.
//
// Never a secret: the event types admit no token, secret, password or code, and only the schema's
// fields are written: anything else a caller passes (a cast, a spread object) is dropped.

export const AUDIT_SCHEMA_VERSION = 1

/** Every event and whether it records a success or a failure. */
export const AUDIT_EVENTS = {
  'token.issued': 'success',
  'token.refreshed': 'success',
  'token.revoked': 'success',
  'grant.family_revoked': 'failure',
  'client.auth_failed': 'failure',
  'client.blocked': 'failure',
  'signin.succeeded': 'success',
  'signin.failed': 'failure',
  'user.locked_out': 'failure',
  'ciba.requested': 'success',
  'ciba.approved': 'success',
  'ciba.denied': 'failure',
  'ciba.delivered': 'success',
  'ciba.delivery_failed': 'failure',
  'device.approved': 'success',
  'device.denied': 'failure',
  'key.rotated': 'success',
  'logout.delivered': 'success',
  'logout.failed': 'failure',
  'federation.signed_in': 'success',
  'federation.linked': 'success',
  'federation.failed': 'failure',
  'federation.logout': 'success',
  'admin.changed': 'success',
  'admin.refused': 'failure',
  'account.app_revoked': 'success',
  'account.session_ended': 'success',
  'account.password_changed': 'success',
  'account.password_refused': 'failure',
  'registration.created': 'success',
  'registration.updated': 'success',
  'registration.deleted': 'success',
  'registration.refused': 'failure',
  'factor.enrolled': 'success',
  'factor.removed': 'success',
  'factor.recovery_codes_replaced': 'success',
  'signin.stepped_up': 'success',
  'signin.second_factor_failed': 'failure',
  'passkey.added': 'success',
  'passkey.removed': 'success',
  'passkey.used': 'success',
  'passkey.failed': 'failure',
} as const satisfies Record<string, 'success' | 'failure'>

export type AuditEventName = keyof typeof AUDIT_EVENTS

/** Event-specific fields, written snake_case. */
export interface AuditDetails {
  /** token.issued: what the response carried, e.g. ["access_token", "refresh_token"]. */
  tokenTypes?: string[]
  /** token.issued, token.refreshed: the access token's format. */
  accessTokenFormat?: 'jwt' | 'reference'
  scope?: string
  /** token.revoked: what was revoked. */
  tokenKind?: string
  /**
   * signin.*, user.locked_out: the username as typed (cut to 200 characters: it is the
   * requester's input), only when an account has it.
   */
  username?: string
  /**
   * signin.failed for a username no account has: its keyed digest (src/interaction/password-check.ts
   * usernameDigest), never the name itself, which may be a password typed into the wrong field.
   */
  usernameHash?: string
  /** user.locked_out, client.blocked: ISO 8601 end of the lock. */
  lockedUntil?: string
  /** user.locked_out, client.blocked: locks in a row (the duration doubles with each). */
  lockouts?: number
  /** client.auth_failed with reason blocked: seconds until the block ends. */
  retryAfter?: number
  /** key.rotated */
  kid?: string
  alg?: string
  /** ciba.requested and decisions: the request's id (never its auth_req_id). */
  cibaRequestId?: string
  /** ciba.delivered, ciba.delivery_failed: ping or push (CIBA Core §10.2, §10.3). */
  deliveryMode?: 'ping' | 'push'
  /** ciba.delivered, ciba.delivery_failed (push): what was POSTed, tokens or error (access_denied, expired_token, transaction_failed). */
  delivered?: string
  /** logout.*: the ended session's sid (public, as in ID tokens). */
  sid?: string | undefined
  /** logout.*, ciba.delivered, ciba.delivery_failed: attempts made, the last one included. */
  attempts?: number
  /** logout.*: why the session ended: logout, replaced (a new sign-in), admin. */
  sessionEnd?: string
  /** logout.*, ciba.delivered, ciba.delivery_failed: the client's last HTTP answer, when there was one. */
  httpStatus?: number | undefined
  /** federation.*: the identity provider's scheme. */
  idp?: string | undefined
  /**
   * federation.logout: the sessions the upstream's back-channel logout ended; account.password_changed
   * and account.session_ended: the person's other sessions that ended with it.
   */
  sessions?: number
  /** account.app_revoked: the grant families (everything issued from one authorization) revoked with the consent. */
  families?: number
  /** admin.changed: what was written, as its admin API path below /admin (clients/backend). */
  resource?: string
  /** admin.changed: create, replace, delete, add-secret, disable, enable, unlock, sign-out, rotate, apply-seed, approve, deny. */
  action?: string
  /** admin.changed: the names of the fields that changed (never their values: no secret is written). */
  changes?: string[]
  /** factor.*, signin.stepped_up, signin.second_factor_failed: the second factor (otp, recovery_code, passkey). */
  factor?: string
}

export interface AuditEvent extends AuditDetails {
  event: AuditEventName
  clientId?: string | undefined
  subject?: string | undefined
  grantType?: string | undefined
  address?: string | undefined
  requestId?: string | undefined
  /** Why it failed, a fixed word (bad_secret, locked, reuse, …). */
  reason?: string | undefined
}

export interface AuditSink {
  emit(e: AuditEvent): void
}

/** For code paths built without an audit log (tests of one service, the CLI). */
export const discardAudit: AuditSink = { emit() {} }

export type AuditListener = (e: AuditEvent) => void

const WARN: ReadonlySet<AuditEventName> = new Set([
  'grant.family_revoked',
  'client.blocked',
  'user.locked_out',
  'logout.failed',
  'ciba.delivery_failed',
])

/** Every field of the schema, by its name in the code: anything else a caller passes is dropped. */
const FIELDS: Record<string, string> = {
  clientId: 'client_id',
  subject: 'subject',
  grantType: 'grant_type',
  address: 'address',
  requestId: 'request_id',
  reason: 'reason',
  tokenTypes: 'token_types',
  accessTokenFormat: 'access_token_format',
  scope: 'scope',
  tokenKind: 'token_kind',
  username: 'username',
  usernameHash: 'username_hash',
  lockedUntil: 'locked_until',
  lockouts: 'lockouts',
  retryAfter: 'retry_after',
  kid: 'kid',
  alg: 'alg',
  cibaRequestId: 'ciba_request_id',
  deliveryMode: 'delivery_mode',
  delivered: 'delivered',
  sid: 'sid',
  attempts: 'attempts',
  sessionEnd: 'session_end',
  httpStatus: 'http_status',
  idp: 'idp',
  sessions: 'sessions',
  families: 'families',
  resource: 'resource',
  action: 'action',
  changes: 'changes',
  factor: 'factor',
}

const MESSAGES: Record<AuditEventName, string> = {
  'token.issued': 'token issued',
  'token.refreshed': 'refresh token rotated',
  'token.revoked': 'token revoked',
  'grant.family_revoked': 'grant family revoked: a one-time artefact was used again',
  'client.auth_failed': 'client authentication rejected',
  'client.blocked': 'client authentication blocked',
  'signin.succeeded': 'sign-in succeeded',
  'signin.failed': 'sign-in failed',
  'user.locked_out': 'account locked',
  'ciba.requested': 'CIBA request started',
  'ciba.approved': 'CIBA request approved',
  'ciba.denied': 'CIBA request denied',
  'ciba.delivered': 'CIBA ping or push delivered to the client',
  'ciba.delivery_failed': 'CIBA ping or push failed; giving up',
  'device.approved': 'device authorization approved',
  'device.denied': 'device authorization denied',
  'key.rotated': 'signing key created',
  'logout.delivered': 'back-channel logout delivered',
  'logout.failed': 'back-channel logout failed; giving up',
  'federation.signed_in': 'signed in through an identity provider',
  'federation.linked': 'upstream identity linked to a local user (reason: created or linked by verified email)',
  'federation.failed': 'sign-in through an identity provider failed',
  'federation.logout': 'back-channel logout from an identity provider ended sessions',
  'admin.changed': 'changed through the admin API',
  'admin.refused': 'admin API request refused',
  'account.app_revoked': "a person withdrew an application's access on the account page",
  'account.session_ended': 'a person ended a session on the account page',
  'account.password_changed': 'a person changed their password',
  'account.password_refused': 'a password change was refused',
  'registration.created': 'a client registered itself (RFC 7591)',
  'registration.updated': 'a registered client changed its registration (RFC 7592)',
  'registration.deleted': 'a registered client deleted its registration (RFC 7592)',
  'registration.refused': 'a client registration was refused',
  'factor.enrolled': 'a second factor was set up',
  'factor.removed': 'second factors were removed (reason: self or admin)',
  'factor.recovery_codes_replaced': 'a new set of recovery codes replaced the old one',
  'signin.stepped_up': 'a second factor was added to a sign-in',
  'signin.second_factor_failed': 'a second factor was refused',
  'passkey.added': 'a person added a passkey on the account page',
  'passkey.removed': 'a person removed a passkey on the account page',
  'passkey.used': 'signed in with a passkey',
  'passkey.failed':
    'a passkey was refused (reason: malformed, challenge, unknown_credential, other_account, disabled, locked, verification, counter, duplicate, unavailable)',
}

/** The line written for an event (snake_case fields, undefined ones left out). */
export function auditRecord(e: AuditEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { log: 'audit', audit_version: AUDIT_SCHEMA_VERSION, event: e.event, outcome: AUDIT_EVENTS[e.event] }
  for (const [key, value] of Object.entries(e)) {
    if (key === 'event' || value === undefined) continue
    const name = FIELDS[key]
    if (name !== undefined) out[name] = value
  }
  return out
}

/** Writes each event as one pino line (info; warn for lockouts, blocks and reuse) and tells the listeners. */
/** What the audit log writes to: a pino logger, or anything with these two methods. */
export interface AuditLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  isLevelEnabled?(level: 'info' | 'warn'): boolean
}

export function createAuditLog(opts: { logger: AuditLogger; listeners?: AuditListener[] }): AuditSink {
  const listeners = opts.listeners ?? []
  return {
    emit(e) {
      const level = WARN.has(e.event) ? 'warn' : 'info'
      // The record is built only when it is written (the hot paths run at LOG_LEVEL=warn too).
      if (opts.logger.isLevelEnabled?.(level) ?? true) opts.logger[level](auditRecord(e), MESSAGES[e.event])
      for (const l of listeners) l(e)
    },
  }
}
