// The README's "Try it" example works as printed: its shell block, run unchanged by bash against
// a real server with the demo seed (only the address differs: the test server's port is free, not
// 5000), gives a JWT access token, the introspection answer the README shows, and after
// revocation {"active":false}. A reader's first contact must not be a command that fails.
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { decodeProtectedHeader } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'

const PRINTED_BASE = 'http://localhost:5000'

let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterAll(async () => {
  await server?.stop()
  await testDb?.close()
})

/** The first ```sh block under "## Try it". */
function tryItBlock(readme: string): string {
  const section = readme.slice(readme.indexOf('\n## Try it\n'))
  const m = /```sh\n([\s\S]*?)```/.exec(section)
  if (!m) throw new Error('README.md has no shell block under "## Try it"')
  return m[1]!
}

/** curl -s prints the answers back to back: split them into the JSON objects they are. */
function jsonObjects(out: string): string[] {
  const found: string[] = []
  let depth = 0
  let start = -1
  let inString = false
  for (let i = 0; i < out.length; i++) {
    const c = out[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') {
      if (depth++ === 0) start = i
    } else if (c === '}' && --depth === 0) found.push(out.slice(start, i + 1))
  }
  return found
}

describe('README "Try it"', { timeout: 120_000 }, () => {
  it('runs as printed against the demo seed: token, introspection, revocation', async () => {
    const readme = await readFile('README.md', 'utf8')
    const block = tryItBlock(readme)
    // The answer the README prints for the introspection, up to its "…".
    const printed = /^# (\{"active":true,.*),…\}$/m.exec(block)?.[1]
    expect(printed, 'the README prints the introspection answer as {"active":true,…}').toBeDefined()

    testDb = usingServer() ? await createTestDb() : undefined
    // ISSUER as npm start has it on port 5000, so the printed "iss" is what the server says.
    server = await startServer({ ...(testDb?.env ?? {}), SEED_FILE: 'seed/demo.json', ISSUER: PRINTED_BASE })
    const script = block.split(PRINTED_BASE).join(server.baseUrl)
    const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { encoding: 'utf8', timeout: 60_000 })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)

    const [token, introspected, afterRevocation, ...rest] = jsonObjects(run.stdout)
    expect(rest).toEqual([])
    const issued = JSON.parse(token!)
    expect(issued).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'orders.read orders.write' })
    expect(decodeProtectedHeader(issued.access_token).typ).toBe('at+jwt') // RFC 9068 §2.1
    expect(introspected!.slice(0, printed!.length), 'the introspection answer as the README prints it').toBe(printed)
    expect(afterRevocation).toBe('{"active":false}')
  })
})
