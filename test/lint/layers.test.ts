// The layer check itself (.dependency-cruiser.cjs, run by `npm run lint`): a wrong-way import in a
// throwaway tree fails it with the rule's name, and the same tree without it passes.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise')

async function cruise(dir: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs'], { cwd: dir })
    return { code: 0, out: stdout }
  } catch (err) {
    const e = err as { code: number; stdout: string }
    return { code: e.code, out: e.stdout }
  }
}

describe('layer rule check', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authz-layers-'))
    await cp(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'))
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }))
    for (const d of ['services', 'grants', 'tokens', 'routes', 'stores/postgres']) await mkdir(join(dir, 'src', d), { recursive: true })
    await writeFile(join(dir, 'src/tokens/handles.ts'), 'export const handle = () => "h"\n')
    await writeFile(join(dir, 'src/grants/grant.ts'), "import { handle } from '../tokens/handles.js'\nexport const grant = () => handle()\n")
    await writeFile(join(dir, 'src/flows/token/service.ts'), "import { grant } from '../grants/grant.js'\nexport const token = () => grant()\n")
    await writeFile(join(dir, 'src/flows/token/routes.ts'), "import { token } from '../services/token.js'\nexport const route = () => token()\n")
  })
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  it('passes a tree whose imports point down', async () => {
    const { code, out } = await cruise(dir)
    expect(out).toContain('no dependency violations found')
    expect(code).toBe(0)
  })

  it('fails on a grant that imports a service, naming the rule and the files', async () => {
    await writeFile(join(dir, 'src/grants/bad.ts'), "import { token } from '../services/token.js'\nexport const bad = () => token()\n")
    const { code, out } = await cruise(dir)
    await rm(join(dir, 'src/grants/bad.ts'))
    expect(code).not.toBe(0)
    expect(out).toContain('grants-below-services: src/grants/bad.ts → src/flows/token/service.ts')
  })

  it('fails on a route that reaches a Postgres store', async () => {
    await writeFile(join(dir, 'src/stores/users.postgres.ts'), 'export const users = 1\n')
    await writeFile(join(dir, 'src/routes/bad.ts'), "import { users } from '../stores/postgres/users.js'\nexport const bad = users\n")
    const { code, out } = await cruise(dir)
    await rm(join(dir, 'src/routes/bad.ts'))
    expect(code).not.toBe(0)
    expect(out).toContain('routes-no-stores-or-sql: src/routes/bad.ts → src/stores/users.postgres.ts')
  })
})
