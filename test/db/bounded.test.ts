// The database bounds over real sockets: a server that accepts and never answers (a frozen or
// half-open PostgreSQL), a port where nothing listens, and, against the real server, a TCP proxy
// that stops forwarding mid-session and resumes. Each wait ends within its bound with an
// UnavailableError; the outage is reported once when it begins and once when it ends.
import { createServer, connect, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createBoundedDb, type OutageEvents } from '../../src/db/bounded.js'
import { createPgDb } from '../../src/db/pg.js'
import { UnavailableError } from '../../src/errors.js'
import { createTestDb, usingServer, type TestDb } from '../helpers/db.js'

const undo: Array<() => Promise<unknown> | void> = []
afterEach(async () => {
  for (const u of undo.splice(0).reverse()) await u()
})

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  undo.push(() => new Promise((r) => server.close(r)))
  return (server.address() as { port: number }).port
}

function recorder() {
  const events: string[] = []
  const on: OutageEvents = {
    down: (err) => events.push(`down: ${err.message}`),
    up: ({ failures }) => events.push(`up after ${failures} failures`),
  }
  return { events, on }
}

async function rejectsWithin(p: Promise<unknown>, ms: number): Promise<UnavailableError> {
  const t0 = Date.now()
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(UnavailableError)
  expect(Date.now() - t0).toBeLessThan(ms)
  return err as UnavailableError
}

function boundedPg(port: number, events: OutageEvents, url = `postgres://nobody@127.0.0.1:${port}/nothing`, probeIntervalMs = 0) {
  const pg = createPgDb({ connectionString: url, max: 2, connectTimeoutMs: 300 })
  const db = createBoundedDb(pg, { queryTimeoutSeconds: 0.4, connectTimeoutSeconds: 0.3, events, probeIntervalMs })
  undo.push(() => db.close())
  return db
}

describe('bounded database waits', { timeout: 20_000 }, () => {
  it('gives up on a server that accepts and never answers, for queries and transactions', async () => {
    const held: Socket[] = []
    const port = await listen(createServer((s) => held.push(s)))
    undo.push(() => held.forEach((s) => s.destroy()))
    const { events, on } = recorder()
    const db = boundedPg(port, on)
    const err = await rejectsWithin(db.query('SELECT 1'), 1500)
    expect(err.retryAfterSeconds).toBe(1)
    await rejectsWithin(
      db.transaction((tx) => tx.query('SELECT 1')),
      1500,
    )
    expect(db.available).toBe(false)
    expect(db.failures).toBe(2)
    expect(events).toHaveLength(1) // once per outage
  })

  it('while down, lets one operation a second try the database and refuses the others at once', async () => {
    const held: Socket[] = []
    const port = await listen(createServer((s) => held.push(s)))
    undo.push(() => held.forEach((s) => s.destroy()))
    const { events, on } = recorder()
    const db = boundedPg(port, on, undefined, 1000)
    await rejectsWithin(db.query('SELECT 1'), 1500) // waits out its bound: the outage begins
    const t0 = Date.now()
    await Promise.all(
      [db.query('SELECT 2'), db.transaction((tx) => tx.query('SELECT 3')), db.exec('SELECT 4')].map((p) => rejectsWithin(p, 100)),
    )
    expect(Date.now() - t0).toBeLessThan(100)
    expect(db.failures).toBe(4)
    expect(events).toHaveLength(1)
  })

  it('answers at once when nothing listens', async () => {
    const port = await listen(createServer())
    await undo.pop()!() // close it again: a free port, refused
    const { events, on } = recorder()
    const db = boundedPg(port, on)
    await rejectsWithin(db.query('SELECT 1'), 1000)
    expect(events).toEqual([expect.stringMatching(/^down: /)])
  })

  it('leaves errors that are not about reaching the database as they are', async () => {
    const tdb: TestDb = await createTestDb()
    undo.push(() => tdb.close())
    const { events, on } = recorder()
    const db = createBoundedDb(tdb.db, { queryTimeoutSeconds: 5, connectTimeoutSeconds: 5, events: on })
    await expect(db.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ code: '42P01' })
    expect(db.available).toBe(true)
    expect(events).toEqual([])
  })

  it.runIf(usingServer())('ends a wait on a server that stops answering mid-session, and recovers once it answers again', async () => {
    const tdb = await createTestDb()
    undo.push(() => tdb.close())
    const target = new URL(tdb.env.DATABASE_URL!)
    let frozen = false
    const pairs: Socket[][] = []
    const port = await listen(
      createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname)
        pairs.push([client, upstream])
        for (const [from, to] of [
          [client, upstream],
          [upstream, client],
        ] as const) {
          from.on('data', (d) => {
            if (!frozen) to.write(d) // frozen: bytes vanish, as with a stopped server
          })
          from.on('error', () => to.destroy())
          from.on('close', () => to.destroy())
        }
      }),
    )
    undo.push(() => pairs.flat().forEach((s) => s.destroy()))
    const { events, on } = recorder()
    const url = new URL(tdb.env.DATABASE_URL!)
    url.host = `127.0.0.1:${port}`
    const db = boundedPg(port, on, url.href)
    expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }])
    frozen = true
    await rejectsWithin(db.query('SELECT 2'), 1500)
    await rejectsWithin(db.query('SELECT 3'), 1500)
    frozen = false
    expect((await db.query<{ n: number }>('SELECT 4 AS n')).rows).toEqual([{ n: 4 }])
    expect(events).toEqual([expect.stringMatching(/^down: /), 'up after 2 failures'])
  })

  it.runIf(usingServer())('reports a lost LISTEN connection once, not at every retry, and resynchronises when it is back', async () => {
    const tdb = await createTestDb()
    undo.push(() => tdb.close())
    const target = new URL(tdb.env.DATABASE_URL!)
    const sockets: Socket[] = []
    const proxy = () =>
      createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname)
        sockets.push(client, upstream)
        client.pipe(upstream).pipe(client)
        for (const s of [client, upstream]) s.on('error', () => {}).on('close', () => (s === client ? upstream : client).destroy())
      })
    let server = proxy()
    const port = await listen(server)
    const url = new URL(tdb.env.DATABASE_URL!)
    url.host = `127.0.0.1:${port}`
    const errors: string[] = []
    const db = createPgDb({ connectionString: url.href, max: 1, onError: (err) => errors.push(err.message) })
    undo.push(() => db.close())
    const got: Array<string | undefined> = []
    await db.listen('bounded_test', (payload) => got.push(payload))

    // The server goes away for about four reconnection attempts (one a second), then comes back.
    const closed = new Promise<void>((r) => server.close(() => r()))
    sockets.forEach((s) => s.destroy())
    await closed
    await new Promise((r) => setTimeout(r, 4200)) // transport time: the retries happen meanwhile
    server = proxy()
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
    undo.push(() => new Promise((r) => server.close(r)))
    undo.push(() => db.close()) // before the proxy closes: it waits for its connections
    await vi.waitFor(() => expect(got).toContain(undefined), { timeout: 5000 })
    expect(errors).toHaveLength(1)
  })

  it.runIf(usingServer())(
    'reports idle pool connections dying together once, and again only after the database answered in between',
    async () => {
      const tdb = await createTestDb()
      undo.push(() => tdb.close())
      const target = new URL(tdb.env.DATABASE_URL!)
      const sockets: Socket[] = []
      const port = await listen(
        createServer((client) => {
          const upstream = connect(Number(target.port || 5432), target.hostname)
          sockets.push(client, upstream)
          client.pipe(upstream).pipe(client)
          for (const s of [client, upstream]) s.on('error', () => {}).on('close', () => (s === client ? upstream : client).destroy())
        }),
      )
      const url = new URL(tdb.env.DATABASE_URL!)
      url.host = `127.0.0.1:${port}`
      const errors: string[] = []
      const db = createPgDb({ connectionString: url.href, max: 4, onError: (err) => errors.push(err.message) })
      undo.push(() => db.close())
      const fillPool = () => Promise.all([1, 2, 3, 4].map(() => db.query('SELECT pg_sleep(0.05)')))
      const killAll = async () => {
        sockets.splice(0).forEach((s) => s.destroy())
        await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0))
        await new Promise((r) => setTimeout(r, 100)) // transport: the other idle clients notice too
      }
      await fillPool() // four idle connections
      await killAll()
      expect(errors).toHaveLength(1)
      await fillPool()
      await killAll()
      expect(errors).toHaveLength(2)
    },
  )
})
