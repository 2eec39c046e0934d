// Tells the user that a CIBA request waits for their approval (CIBA Core §7.2 leaves the channel
// to the OP). Pluggable: anything with notify() works. Built in: a Standard Webhooks webhook
// (https://www.standardwebhooks.com/, so receivers verify it with an existing library) and a log
// notifier for development. The client's request never waits for, or fails because of, delivery.
import { createHmac, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../../domain/clock.js'

/** The webhook's JSON body (snake_case, as sent). */
export interface CibaNotification {
  request_id: string
  subject: string
  username: string
  client_id: string
  client_name: string
  scopes: string[]
  binding_message: string | null
  acr_values: string[]
  /** Unix seconds. */
  expires_at: number
  approval_url: string
}

export interface CibaNotifier {
  /** Fire and forget: returns at once, delivery happens in the background. */
  notify(n: CibaNotification): void
  /** Resolves when every delivery started so far has finished (shutdown, tests). */
  drain(): Promise<void>
}

/**
 * The HMAC key of a Standard Webhooks secret: `whsec_<base64>` carries the key bytes (what the
 * spec's libraries generate and expect); any other value is used as its UTF-8 bytes.
 */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8')
}

/** Standard Webhooks: v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>. */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', webhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

export interface WebhookNotifierDeps {
  url: string
  secret: string
  clock: Clock
  logger: Pick<Logger, 'info' | 'warn' | 'error'>
  /** Per attempt. */
  timeoutMs?: number
  /** Waits before the 2nd, 3rd… attempt. */
  backoffMs?: number[]
  fetch?: typeof fetch
}

export function createWebhookNotifier(deps: WebhookNotifierDeps): CibaNotifier {
  const timeoutMs = deps.timeoutMs ?? 5000
  const backoff = deps.backoffMs ?? [1000, 5000, 15000]
  const doFetch = deps.fetch ?? fetch
  const inFlight = new Set<Promise<void>>()

  async function attempt(id: string, body: string): Promise<string | undefined> {
    // The timestamp is per attempt: receivers reject stale ones (replay protection).
    const timestamp = Math.floor(deps.clock.now() / 1000)
    try {
      const res = await doFetch(deps.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(deps.secret, id, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      })
      await res.body?.cancel().catch(() => {})
      return res.status >= 200 && res.status < 300 ? undefined : `HTTP ${res.status}`
    } catch (err) {
      return err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'connection failed'
    }
  }

  async function deliver(n: CibaNotification) {
    // One webhook-id for every retry of the same message, so receivers can deduplicate.
    const id = `msg_${randomUUID()}`
    const body = JSON.stringify(n)
    for (let i = 0; ; i++) {
      const failure = await attempt(id, body)
      if (failure === undefined) return
      const wait = backoff[i]
      const log = { request_id: n.request_id, client_id: n.client_id, webhook_id: id, attempt: i + 1, failure }
      if (wait === undefined) return deps.logger.error(log, 'CIBA notification failed; giving up')
      deps.logger.warn(log, 'CIBA notification failed; retrying')
      await new Promise((r) => setTimeout(r, wait).unref())
    }
  }

  return {
    notify(n) {
      const p = deliver(n).catch((err: unknown) => deps.logger.error({ err }, 'CIBA notification crashed'))
      inFlight.add(p)
      void p.finally(() => inFlight.delete(p))
    },
    async drain() {
      while (inFlight.size > 0) await Promise.all([...inFlight])
    },
  }
}

/** Development: no webhook configured, so the approval URL goes to the log at info level. */
export function createLogNotifier(deps: { logger: Pick<Logger, 'info'> }): CibaNotifier {
  return {
    notify(n) {
      deps.logger.info(
        { request_id: n.request_id, client_id: n.client_id, subject: n.subject, approval_url: n.approval_url },
        'CIBA approval requested: open approval_url to approve or deny',
      )
    },
    drain: async () => {},
  }
}
