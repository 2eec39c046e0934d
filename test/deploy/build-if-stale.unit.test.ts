// `npm start` compiles only when dist/ is older than what it is compiled from (scripts/build.mjs),
// shown on a one-file project so the test does not rebuild the repository's own dist/.
import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const SCRIPT = resolve('scripts/build.mjs')
let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authz-build-'))
  await mkdir(join(root, 'src'))
  await writeFile(join(root, 'src', 'main.ts'), 'export const answer: number = 42\n')
  await writeFile(
    join(root, 'tsconfig.json'),
    // types: [] keeps the compiler from loading every @types package of the linked node_modules,
    // which the one-file project does not use and which made each compile take seconds.
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, noEmit: true, types: [] } }),
  )
  await writeFile(
    join(root, 'tsconfig.build.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: false, rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
  )
  await symlink(resolve('node_modules'), join(root, 'node_modules'))
})
afterAll(() => rm(root, { recursive: true, force: true }))

const build = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 })
const mtime = async (p: string) => (await stat(join(root, p))).mtimeMs

describe('scripts/build.mjs', { timeout: 120_000 }, () => {
  it('compiles when there is no build, then not again until a source changes', async () => {
    const first = build('--if-stale')
    expect(first.status).toBe(0)
    expect(first.stderr).not.toContain('dist/ is current')
    const compiledAt = await mtime('dist/main.js')

    const second = build('--if-stale')
    expect(second).toMatchObject({ status: 0, stderr: 'dist/ is current: not compiling\n' })
    expect(await mtime('dist/main.js')).toBe(compiledAt)

    // A source saved after the build (a second later than its stamp): compiled again.
    const later = new Date((await mtime('dist/.build-stamp')) + 1000)
    await writeFile(join(root, 'src', 'main.ts'), 'export const answer: number = 43\n')
    await utimes(join(root, 'src', 'main.ts'), later, later)
    const third = build('--if-stale')
    expect(third.status).toBe(0)
    expect(third.stderr).toBe('')
    expect(
      spawnSync(process.execPath, ['-p', `require(${JSON.stringify(join(root, 'dist', 'main.js'))}).answer`], {
        encoding: 'utf8',
      }).stdout.trim(),
    ).toBe('43')
  })

  it('always compiles without --if-stale, and fails (leaving the stamp) when the compiler does', async () => {
    const stampBefore = await mtime('dist/.build-stamp')
    await writeFile(join(root, 'src', 'main.ts'), 'export const answer: number = "not a number"\n')
    const later = new Date(stampBefore + 2000)
    await utimes(join(root, 'src', 'main.ts'), later, later)
    const failed = build()
    expect(failed.status).not.toBe(0)
    expect(await mtime('dist/.build-stamp')).toBe(stampBefore)
    expect(build('--if-stale').status).not.toBe(0) // still stale: tried again, fails again
  })
})
