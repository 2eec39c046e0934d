import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.js'

describe('authz --version', () => {
  it("prints package.json's version and opens no database", async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
    const [long, short] = await Promise.all([runCli(['--version'], { env: { DATA_DIR: '/nonexistent/authz' } }), runCli(['-V'])])
    expect(long).toEqual({ code: 0, stdout: `authz ${version}\n`, stderr: '' })
    expect(short).toEqual({ code: 0, stdout: `authz ${version}\n`, stderr: '' })
  })
})
