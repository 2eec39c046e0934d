import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      port: 5000,
      host: '0.0.0.0',
      issuer: 'http://localhost:5000',
      databaseUrl: undefined,
      dataDir: './data',
      trustProxy: false,
      accessTokenSigningAlg: 'ES256',
      accessTokenLifetime: 3600,
      cibaDefaultLifetime: 300,
      cibaPollingInterval: 5,
    })
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('derives the issuer from PORT and strips a trailing slash from ISSUER', () => {
    expect(loadConfig({ PORT: '8080' }).issuer).toBe('http://localhost:8080')
    expect(loadConfig({ ISSUER: 'https://id.example.com/' }).issuer).toBe('https://id.example.com')
  })

  it('reads "false" as false (z.coerce.boolean would make it true)', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' })).toMatchObject({ databaseUrl: undefined, port: 5000 })
  })

  it('names every bad variable, one problem per line', () => {
    let err: unknown
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', TRUST_PROXY: 'yes', ACCESS_TOKEN_SIGNING_ALG: 'HS256' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    const problems = (err as ConfigError).problems
    expect(problems).toHaveLength(4)
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['ACCESS_TOKEN_SIGNING_ALG', 'DATABASE_URL', 'PORT', 'TRUST_PROXY'])
  })

  it('requires a webhook secret when a webhook URL is set', () => {
    expect(() => loadConfig({ CIBA_NOTIFICATION_URL: 'https://hooks.example.com/ciba' })).toThrow(/CIBA_NOTIFICATION_SECRET/)
  })
})

describe('the server process with a bad configuration', () => {
  it('exits 1 and prints one line per problem naming the variable', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH, PORT: '99999', LOG_LEVEL: 'loud' },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(res.status).toBe(1)
    const lines = res.stderr.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines.some((l) => l.startsWith('config error: PORT:'))).toBe(true)
    expect(lines.some((l) => l.startsWith('config error: LOG_LEVEL:'))).toBe(true)
  })
})
