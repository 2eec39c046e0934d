// The security counters read from audit events: each event counts under its own metric only.
import { describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/observe/metrics.js'
import { parseMetrics, series } from './prometheus.js'

describe('metrics from audit events', () => {
  it('counts a failed second factor as one, and not as a passkey outcome', async () => {
    const metrics = createMetrics()
    metrics.audit({ event: 'signin.second_factor_failed', subject: 'sub-1' })
    const m = parseMetrics(await metrics.registry.metrics())
    expect(m.get(series('authz_second_factors_total', { outcome: 'failed' }))).toBe(1)
    const passkeys = [...m].filter(([k]) => k.startsWith('authz_passkeys_total{'))
    expect(passkeys).toEqual(['added', 'removed', 'used', 'failed'].map((outcome) => [series('authz_passkeys_total', { outcome }), 0]))
  })
})
