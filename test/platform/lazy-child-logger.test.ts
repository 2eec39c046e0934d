// Per-request child loggers made on first use (src/http/logger.ts lazyChildLoggerFactory): the
// same lines as pino's own child, nothing at disabled levels.
import { describe, expect, it } from 'vitest'
import { lazyChildLoggerFactory } from '../../src/http/logger.js'
import { captureLogs } from '../helpers/app.js'

const lines = (logs: string[]) => logs.map((l) => JSON.parse(l) as Record<string, unknown>).map(({ time: _t, ...rest }) => rest)

describe('lazyChildLoggerFactory', () => {
  it('writes what a pino child writes, only at enabled levels', () => {
    const { logs, logger } = captureLogs({ logLevel: 'warn' })
    const log = lazyChildLoggerFactory(logger, { reqId: 'r1' }, {})
    expect(log.level).toBe('warn')
    log.info({ a: 1 }, 'not written')
    log.debug('not written')
    log.warn({ client_id: 'c' }, 'written')
    log.error(new Error('boom'), 'failed')
    log.child({ extra: true }).warn('from a grandchild')
    log.level = 'debug'
    log.debug('now written')
    expect(logger.level).toBe('warn') // the parent keeps its level
    const out = lines(logs)
    expect(out.map(({ err: _e, ...l }) => l)).toEqual([
      { level: 40, reqId: 'r1', client_id: 'c', msg: 'written' },
      { level: 50, reqId: 'r1', msg: 'failed' },
      { level: 40, reqId: 'r1', extra: true, msg: 'from a grandchild' },
      { level: 20, reqId: 'r1', msg: 'now written' },
    ])
    expect(out[1]!.err).toMatchObject({ type: 'Error', message: 'boom' })
  })

  it('makes a route-level child at once when given options', () => {
    const { logs, logger } = captureLogs({ logLevel: 'warn' })
    const log = lazyChildLoggerFactory(logger, { reqId: 'r2' }, { level: 'info' })
    log.info('route level')
    expect(lines(logs)).toEqual([{ level: 30, reqId: 'r2', msg: 'route level' }])
  })
})
