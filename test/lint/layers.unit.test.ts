// The dependency rules themselves (.dependency-cruiser.cjs, run by `npm run lint`): a throwaway
// tree shaped like src/ passes, and each rule fails, naming itself and the files, on one planted
// wrong import (and the tree passes again once it is removed).
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { cruise as depcruise } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')

/**
 * What `depcruise src --config .dependency-cruiser.cjs` run in `dir` exits with and prints, done
 * in this process: the command loads TypeScript anew for each of the dozen runs below.
 */
async function cruise(dir: string): Promise<{ code: number; out: string }> {
  const options = await extractDepcruiseOptions(join(dir, '.dependency-cruiser.cjs'))
  const tsConfigFile = join(dir, 'tsconfig.json')
  const result = await depcruise(
    ['src'],
    { ...options, baseDir: dir, outputType: 'err', tsConfig: { fileName: tsConfigFile } },
    undefined,
    { tsConfig: extractTSConfig(tsConfigFile) },
  )
  // outputType 'err' makes the output the text the command prints.
  return { code: result.exitCode, out: result.output as string }
}

/** A tree whose imports all point the right way: one file per kind of folder. */
const TREE: Record<string, string> = {
  'src/errors.ts': 'export class OAuthError extends Error {}\n',
  'src/endpoints.ts': "export const TOKEN_PATH = '/connect/token'\n",
  'src/domain/types.ts': "import { OAuthError } from '../errors.js'\nexport type Client = { id: string; e?: OAuthError }\n",
  'src/db/db.ts': 'export interface Db { query(sql: string): Promise<unknown> }\n',
  'src/stores/users.ts': "import type { Client } from '../domain/types.js'\nexport interface UserStore { find(): Promise<Client> }\n",
  'src/stores/users.postgres.ts':
    "import type { Db } from '../db/db.js'\nimport type { UserStore } from './users.js'\nexport const createPgUserStore = (db: Db): UserStore => ({ find: async () => ({ id: String(await db.query('SELECT 1')) }) })\n",
  'src/tokens/handles.ts': "import type { UserStore } from '../stores/users.js'\nexport const handle = (u?: UserStore) => String(u)\n",
  'src/grants/grant.ts': "import { handle } from '../tokens/handles.js'\nexport const grant = () => handle()\n",
  'src/http/glue.ts':
    "import type { FastifyInstance } from 'fastify'\nimport { grant } from '../grants/grant.js'\nexport const glue = (app?: FastifyInstance) => [app, grant()]\n",
  'src/pages/page.ts': "import { TOKEN_PATH } from '../endpoints.js'\nexport const page = () => TOKEN_PATH\n",
  'src/core.ts':
    "import type { FastifyInstance } from 'fastify'\nexport interface Core { app: FastifyInstance }\nexport interface Flow { register(core: Core): Promise<void> }\n",
  'src/flows/token/service.ts': "import { grant } from '../../grants/grant.js'\nexport const token = () => grant()\n",
  'src/flows/token/routes.ts':
    "import type { FastifyPluginAsync } from 'fastify'\nimport { token } from './service.js'\nexport const routes: FastifyPluginAsync = async (app) => { app.get('/', async () => token()) }\n",
  'src/flows/token/index.ts':
    "import type { Core, Flow } from '../../core.js'\nimport { routes } from './routes.js'\nexport const tokenFlow: Flow = { register: async (core: Core) => { await core.app.register(routes) } }\n",
  'src/flows/device/index.ts': "import type { Flow } from '../../core.js'\nexport const deviceFlow: Flow = { register: async () => {} }\n",
  'src/admin/clients.ts': "import { grant } from '../grants/grant.js'\nexport const clients = () => grant()\n",
  'src/create-admin.ts': "import { clients } from './admin/clients.js'\nexport const admin = clients\n",
  'src/app.ts':
    "import { createPgUserStore } from './stores/users.postgres.js'\nimport { tokenFlow } from './flows/token/index.js'\nimport { deviceFlow } from './flows/device/index.js'\nexport const flows = [tokenFlow, deviceFlow, createPgUserStore]\n",
}

describe('dependency rules', () => {
  let dir: string
  const write = async (file: string, text: string) => {
    await mkdir(dirname(join(dir, file)), { recursive: true })
    await writeFile(join(dir, file), text)
  }
  /** Plants `file`, runs the check, removes it again. */
  const planted = async (file: string, text: string, replaces?: string) => {
    await write(file, text)
    try {
      return await cruise(dir)
    } finally {
      if (replaces === undefined) await rm(join(dir, file))
      else await write(file, replaces)
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authz-layers-'))
    await cp(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'))
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
    )
    await mkdir(join(dir, 'node_modules/fastify'), { recursive: true })
    await writeFile(
      join(dir, 'node_modules/fastify/package.json'),
      JSON.stringify({ name: 'fastify', version: '5.0.0', types: 'index.d.ts', main: 'index.js' }),
    )
    await writeFile(
      join(dir, 'node_modules/fastify/index.d.ts'),
      'export interface FastifyInstance { get(p: string, h: () => unknown): void; register(p: unknown): Promise<void> }\nexport type FastifyPluginAsync = (app: FastifyInstance) => Promise<void>\n',
    )
    await writeFile(join(dir, 'node_modules/fastify/index.js'), 'module.exports = {}\n')
    for (const [file, text] of Object.entries(TREE)) await write(file, text)
  })
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  it('passes a tree whose imports point down', async () => {
    const { code, out } = await cruise(dir)
    expect(out).toContain('no dependency violations found')
    expect(code).toBe(0)
  })

  const cases: { rule: string; file: string; text: string; edge: string }[] = [
    {
      rule: 'flows-do-not-import-each-other',
      file: 'src/flows/device/bad.ts',
      text: "import { token } from '../token/service.js'\nexport const bad = token\n",
      edge: 'src/flows/device/bad.ts → src/flows/token/service.ts',
    },
    {
      rule: 'no-fastify-outside-routes-and-http',
      file: 'src/flows/token/logic.ts',
      text: "import type { FastifyRequest } from 'fastify'\nexport type Bad = FastifyRequest\n",
      edge: 'src/flows/token/logic.ts → node_modules/fastify/',
    },
    {
      rule: 'no-sql-outside-stores-and-db',
      file: 'src/grants/bad.ts',
      text: "import type { Db } from '../db/db.js'\nexport type Bad = Db\n",
      edge: 'src/grants/bad.ts → src/db/db.ts',
    },
    {
      rule: 'only-roots-wire-postgres',
      file: 'src/flows/token/bad.ts',
      text: "import { createPgUserStore } from '../../stores/users.postgres.js'\nexport const bad = createPgUserStore\n",
      edge: 'src/flows/token/bad.ts → src/stores/users.postgres.ts',
    },
    {
      rule: 'shared-folders-below-flows',
      file: 'src/grants/bad.ts',
      text: "import { token } from '../flows/token/service.js'\nexport const bad = token\n",
      edge: 'src/grants/bad.ts → src/flows/token/service.ts',
    },
    {
      rule: 'admin-beside-flows',
      file: 'src/admin/bad.ts',
      text: "import { token } from '../flows/token/service.js'\nexport const bad = token\n",
      edge: 'src/admin/bad.ts → src/flows/token/service.ts',
    },
    {
      rule: 'only-roots-build-admin',
      file: 'src/flows/token/bad.ts',
      text: "import { clients } from '../../admin/clients.js'\nexport const bad = clients\n",
      edge: 'src/flows/token/bad.ts → src/admin/clients.ts',
    },
    {
      rule: 'tokens-below-kits',
      file: 'src/tokens/bad.ts',
      text: "import { grant } from '../grants/grant.js'\nexport const bad = grant\n",
      edge: 'src/tokens/bad.ts → src/grants/grant.ts',
    },
    {
      rule: 'pages-render-only',
      file: 'src/pages/bad.ts',
      text: "import type { UserStore } from '../stores/users.js'\nexport type Bad = UserStore\n",
      edge: 'src/pages/bad.ts → src/stores/users.ts',
    },
    {
      rule: 'bottom-imports-nothing-above',
      file: 'src/domain/bad.ts',
      text: "import type { UserStore } from '../stores/users.js'\nexport type Bad = UserStore\n",
      edge: 'src/domain/bad.ts → src/stores/users.ts',
    },
  ]
  it.each(cases)('fails on a planted import breaking $rule, naming it and the files', async ({ rule, file, text, edge }) => {
    const { code, out } = await planted(file, text)
    expect(code).not.toBe(0)
    expect(out).toContain(`${rule}: ${edge}`)
  })

  it('fails on a cycle, even one of type-only imports', async () => {
    const { code, out } = await planted(
      'src/grants/other.ts',
      "import type { Grant } from './grant.js'\nexport type Other = { g?: Grant }\n",
    )
    expect(code).toBe(0) // no cycle yet: grant.ts does not import other.ts
    expect(out).toContain('no dependency violations found')
    await write('src/grants/other.ts', "import type { Grant } from './grant.js'\nexport type Other = { g?: Grant }\n")
    const cyclic = await planted(
      'src/grants/grant.ts',
      "import { handle } from '../tokens/handles.js'\nimport type { Other } from './other.js'\nexport type Grant = { o?: Other }\nexport const grant = () => handle()\n",
      TREE['src/grants/grant.ts'],
    )
    await rm(join(dir, 'src/grants/other.ts'))
    expect(cyclic.code).not.toBe(0)
    expect(cyclic.out).toContain('no-circular: src/grants/grant.ts')
  })
})
