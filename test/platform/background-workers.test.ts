// The flows' background workers (core.workers) start when the app is ready and stop when it
// closes; a worker that cannot start (its LISTEN connection refused, say) fails the start-up
// instead of failing later as an unhandled rejection.
import Fastify from 'fastify'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { BackgroundWorker } from '../../src/core.js'
import { runInBackground, type CoreRuntime } from '../../src/create-core.js'
import { createManualClock } from '../../src/domain/clock.js'

function appWith(worker: BackgroundWorker) {
  const app = Fastify()
  const runtime: CoreRuntime = { cleanupTasks: [], workers: new Map([['test', worker]]) }
  runInBackground(app, runtime, createManualClock(), pino({ level: 'silent' }))
  return app
}

describe('background workers', () => {
  it('are started before the app is ready, and stopped when it closes', async () => {
    const calls: string[] = []
    const app = appWith({
      start: async () => {
        await new Promise((resolve) => setImmediate(resolve))
        calls.push('started')
      },
      stop: async () => void calls.push('stopped'),
    })
    await app.ready()
    expect(calls).toEqual(['started'])
    await app.close()
    expect(calls).toEqual(['started', 'stopped'])
  })

  it('fail the start-up when one cannot start', async () => {
    const app = appWith({ start: () => Promise.reject(new Error('LISTEN refused')), stop: async () => {} })
    await expect(app.ready()).rejects.toThrow('LISTEN refused')
    await app.close()
  })
})
