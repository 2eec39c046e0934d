// Prometheus metrics (text exposition format, prom-client), served on their own listener
// (METRICS_PORT, src/observe/metrics-server.ts), never on the public one. One registry per app:
// no global state, so a test builds as many apps as it likes. docs/operate.md "Metrics" lists every series.
//
// Security outcomes are counted from the audit events (one place decides what happened); the
// request series from Fastify's onResponse hook; the database and cleanup gauges are read when
// Prometheus scrapes.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { AuditEvent } from './audit.js'

/** What a database driver reports about its connections (pg: the pool; PGlite: its one connection). */
export interface PoolStats {
  /** Connections open. */
  total: number
  idle: number
  /** Queries and transactions waiting for a connection. */
  waiting: number
  /** Connections handed out so far, and the seconds spent waiting for them (both only grow). */
  acquired: number
  waitSeconds: number
}

export interface MetricsSources {
  pool?: () => PoolStats | undefined
  /** Expired rows not yet removed by the cleanup, by table. */
  expiredRows?: () => Promise<Record<string, number>>
}

export type IntrospectionResult = 'active' | 'inactive' | 'rejected'

export interface Metrics {
  readonly registry: Registry
  /** A finished HTTP request: its route pattern (not its URL, so that the label set stays bounded). */
  request(method: string, route: string, status: number, seconds: number): void
  introspection(result: IntrospectionResult): void
  /** Counts what an audit event says happened; give it to the audit log as a listener. */
  audit(e: AuditEvent): void
  /** The gauges read at scrape time. */
  sources(s: MetricsSources): void
}

/** Seconds; the token endpoint answers in about a millisecond, a sign-in (scrypt) in tens. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export function createMetrics(opts: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry })
  let sources: MetricsSources = {}
  const registers = [registry]

  const requests = new Counter({
    name: 'authz_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
  })
  const latency = new Histogram({
    name: 'authz_http_request_duration_seconds',
    help: 'Time from the request to the end of the answer, by route pattern, method and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const tokens = new Counter({
    name: 'authz_tokens_issued_total',
    help: 'Tokens issued at the token endpoint, by grant type and token type (access_token, refresh_token, id_token).',
    labelNames: ['grant_type', 'token_type'] as const,
    registers,
  })
  const introspections = new Counter({
    name: 'authz_introspections_total',
    help: 'Introspection requests by result: active, inactive, or rejected (caller not authenticated, bad request).',
    labelNames: ['result'] as const,
    registers,
  })
  const clientAuth = new Counter({
    name: 'authz_client_auth_failures_total',
    help: 'Failed client (or API) authentications, by reason.',
    labelNames: ['reason'] as const,
    registers,
  })
  const signIn = new Counter({
    name: 'authz_sign_in_failures_total',
    help: 'Failed password checks (sign-in page and password grant), by reason.',
    labelNames: ['reason'] as const,
    registers,
  })
  const federated = new Counter({
    name: 'authz_federated_signins_total',
    help: 'Sign-ins through an upstream identity provider, by scheme and outcome (success, created, linked, or the failure reason).',
    labelNames: ['scheme', 'outcome'] as const,
    registers,
  })
  const lockouts = new Counter({
    name: 'authz_lockouts_total',
    help: 'Locks started: user accounts (kind="user") and client-and-address pairs (kind="client").',
    labelNames: ['kind'] as const,
    registers,
  })
  const ciba = new Counter({
    name: 'authz_ciba_requests_total',
    help: 'CIBA requests by outcome: requested, approved, denied, token_issued.',
    labelNames: ['outcome'] as const,
    registers,
  })
  const device = new Counter({
    name: 'authz_device_authorizations_total',
    help: 'Device authorizations (RFC 8628) decided, by outcome: approved, denied, token_issued.',
    labelNames: ['outcome'] as const,
    registers,
  })
  const familyRevoked = new Counter({
    name: 'authz_grant_families_revoked_total',
    help: 'Grant families revoked because a one-time artefact was used again.',
    labelNames: ['grant_type'] as const,
    registers,
  })
  const logouts = new Counter({
    name: 'authz_backchannel_logouts_total',
    help: 'Back-channel logouts finished, by outcome: delivered, failed (given up).',
    labelNames: ['outcome'] as const,
    registers,
  })
  const cibaDeliveries = new Counter({
    name: 'authz_ciba_deliveries_total',
    help: 'CIBA pings and pushes finished, by mode (ping, push) and outcome: delivered, failed (given up).',
    labelNames: ['mode', 'outcome'] as const,
    registers,
  })
  for (const mode of ['ping', 'push'] as const)
    for (const outcome of ['delivered', 'failed'] as const) cibaDeliveries.inc({ mode, outcome }, 0)
  const registrations = new Counter({
    name: 'authz_client_registrations_total',
    help: 'Dynamic client registration (RFC 7591, RFC 7592) by outcome: created, updated, deleted, refused.',
    labelNames: ['outcome'] as const,
    registers,
  })
  const secondFactors = new Counter({
    name: 'authz_second_factors_total',
    help: 'Second factors by outcome: enrolled, removed, recovery_codes_replaced, stepped_up (a sign-in completed by one), failed.',
    labelNames: ['outcome'] as const,
    registers,
  })
  for (const outcome of ['enrolled', 'removed', 'recovery_codes_replaced', 'stepped_up', 'failed'] as const)
    secondFactors.inc({ outcome }, 0)
  const passkeys = new Counter({
    name: 'authz_passkeys_total',
    help: 'Passkey events by outcome: added, removed, used (a sign-in), failed (a refused registration or sign-in).',
    labelNames: ['outcome'] as const,
    registers,
  })
  for (const outcome of ['added', 'removed', 'used', 'failed'] as const) passkeys.inc({ outcome }, 0)
  for (const result of ['active', 'inactive', 'rejected'] as const) introspections.inc({ result }, 0)
  for (const outcome of ['delivered', 'failed'] as const) logouts.inc({ outcome }, 0)
  for (const kind of ['user', 'client'] as const) lockouts.inc({ kind }, 0)

  new Gauge({
    name: 'authz_expired_rows',
    help: 'Expired rows awaiting the background cleanup, by table (counted up to 100000 per table).',
    labelNames: ['table'] as const,
    registers,
    async collect() {
      const counts = await sources.expiredRows?.()
      for (const [table, n] of Object.entries(counts ?? {})) this.set({ table }, n)
    },
  })

  return {
    registry,
    request(method, route, status, seconds) {
      const labels = { method, route, status_code: status }
      requests.inc(labels)
      latency.observe(labels, seconds)
    },
    introspection(result) {
      introspections.inc({ result })
    },
    audit(e) {
      switch (e.event) {
        case 'token.issued':
          for (const t of e.tokenTypes ?? []) tokens.inc({ grant_type: e.grantType ?? 'unknown', token_type: t })
          if (e.grantType === 'urn:openid:params:grant-type:ciba') ciba.inc({ outcome: 'token_issued' })
          else if (e.grantType === 'urn:ietf:params:oauth:grant-type:device_code') device.inc({ outcome: 'token_issued' })
          break
        case 'client.auth_failed':
          clientAuth.inc({ reason: e.reason ?? 'unknown' })
          break
        case 'client.blocked':
          lockouts.inc({ kind: 'client' })
          break
        case 'signin.failed':
          signIn.inc({ reason: e.reason ?? 'unknown' })
          break
        case 'user.locked_out':
          lockouts.inc({ kind: 'user' })
          break
        case 'logout.delivered':
          logouts.inc({ outcome: 'delivered' })
          break
        case 'logout.failed':
          logouts.inc({ outcome: 'failed' })
          break
        case 'ciba.delivered':
          cibaDeliveries.inc({ mode: e.deliveryMode ?? 'ping', outcome: 'delivered' })
          break
        case 'ciba.delivery_failed':
          cibaDeliveries.inc({ mode: e.deliveryMode ?? 'ping', outcome: 'failed' })
          break
        case 'ciba.requested':
          ciba.inc({ outcome: 'requested' })
          break
        case 'ciba.approved':
          ciba.inc({ outcome: 'approved' })
          break
        case 'ciba.denied':
          ciba.inc({ outcome: 'denied' })
          break
        case 'device.approved':
          device.inc({ outcome: 'approved' })
          break
        case 'device.denied':
          device.inc({ outcome: 'denied' })
          break
        case 'federation.signed_in':
          federated.inc({ scheme: e.idp ?? 'unknown', outcome: 'success' })
          break
        case 'federation.linked':
          federated.inc({ scheme: e.idp ?? 'unknown', outcome: e.reason ?? 'linked' })
          break
        case 'federation.failed':
          federated.inc({ scheme: e.idp ?? 'unknown', outcome: e.reason ?? 'unknown' })
          break
        case 'factor.enrolled':
          secondFactors.inc({ outcome: 'enrolled' })
          break
        case 'factor.removed':
          secondFactors.inc({ outcome: 'removed' })
          break
        case 'factor.recovery_codes_replaced':
          secondFactors.inc({ outcome: 'recovery_codes_replaced' })
          break
        case 'signin.stepped_up':
          secondFactors.inc({ outcome: 'stepped_up' })
          break
        case 'signin.second_factor_failed':
          secondFactors.inc({ outcome: 'failed' })
          break
        case 'passkey.added':
        case 'passkey.removed':
        case 'passkey.used':
        case 'passkey.failed':
          passkeys.inc({ outcome: e.event.slice('passkey.'.length) })
          break
        case 'grant.family_revoked':
          familyRevoked.inc({ grant_type: e.grantType ?? 'unknown' })
          break
        case 'registration.created':
        case 'registration.updated':
        case 'registration.deleted':
        case 'registration.refused':
          registrations.inc({ outcome: e.event.slice('registration.'.length) })
          break
        default:
      }
    },
    sources(s) {
      if (s.pool && !sources.pool) registerPoolGauges(registers, () => sources.pool?.())
      sources = { ...sources, ...s }
    },
  }
}

/** The pool series, registered only for a driver that has a pool (with DATABASE_URL). */
function registerPoolGauges(registers: Registry[], get: () => PoolStats | undefined): void {
  new Gauge({
    name: 'authz_db_pool_connections',
    help: 'Database connections by state: idle, in use, and requests waiting for one.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const s = get()
      if (!s) return
      this.set({ state: 'idle' }, s.idle)
      this.set({ state: 'in_use' }, s.total - s.idle)
      this.set({ state: 'waiting' }, s.waiting)
    },
  })
  // Counters kept by the driver: each scrape copies the driver's running totals.
  new Counter({
    name: 'authz_db_pool_acquired_total',
    help: 'Database connections handed out since start.',
    registers,
    collect() {
      const s = get()
      if (!s) return
      this.reset()
      this.inc(s.acquired)
    },
  })
  new Counter({
    name: 'authz_db_pool_wait_seconds_total',
    help: 'Seconds spent waiting for a database connection since start; rate() of it over rate(authz_db_pool_acquired_total) is the mean wait.',
    registers,
    collect() {
      const s = get()
      if (!s) return
      this.reset()
      this.inc(s.waitSeconds)
    },
  })
}
