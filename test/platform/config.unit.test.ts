import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      port: 5000,
      host: '127.0.0.1',
      issuer: 'http://localhost:5000',
      databaseUrl: undefined,
      dataDir: './data',
      embeddedSharedBuffers: '16MB',
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

  it('says of every bad variable, in one sentence each, what it expects and what it got', () => {
    let err: unknown
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', TRUST_PROXY: 'yes', ACCESS_TOKEN_SIGNING_ALG: 'HS256' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).problems).toEqual([
      'PORT must be an integer from 0 to 65535, got "eighty"',
      'DATABASE_URL must be a postgres:// or postgresql:// URL, got "mysql://x"',
      'TRUST_PROXY must be true, false, or a comma-separated list of proxy addresses and networks (10.0.0.0/8, ::1, loopback), got "yes"',
      'ACCESS_TOKEN_SIGNING_ALG must be one of ES256, RS256, PS256, EdDSA, got "HS256"',
    ])
  })

  it("takes the embedded database's shared_buffers in PostgreSQL's notation, within what PGlite can hold", () => {
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS: '256MB' }).embeddedSharedBuffers).toBe('256MB')
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS: '128kB' }).embeddedSharedBuffers).toBe('128kB')
    for (const bad of ['8kB', '2GB', '16mb', '16 MB', '-16MB', '16']) {
      expect(() => loadConfig({ EMBEDDED_SHARED_BUFFERS: bad })).toThrow(
        `EMBEDDED_SHARED_BUFFERS must be a size from 128kB to 1GB, such as 16MB or 256MB, got "${bad}"`,
      )
    }
  })

  it('never repeats a secret or a database password in an error', () => {
    expect(() => loadConfig({ KEY_ENCRYPTION_SECRET: 'hunter2' })).toThrow(
      new ConfigError(['KEY_ENCRYPTION_SECRET must be at least 16 characters long, got a value of 7 characters']),
    )
    expect(() => loadConfig({ DATABASE_URL: 'mysql://authz:pa55word@db/authz' })).toThrow(
      new ConfigError(['DATABASE_URL must be a postgres:// or postgresql:// URL, got "mysql://authz:***@db/authz"']),
    )
  })

  it('refuses an ISSUER with a path, since every endpoint is served at the root', () => {
    expect(() => loadConfig({ ISSUER: 'https://example.com/auth' })).toThrow(
      /^ISSUER must be an http:\/\/ or https:\/\/ URL without a path, query or fragment, .*got "https:\/\/example.com\/auth"$/,
    )
    expect(() => loadConfig({ ISSUER: 'https://example.com?x=1' })).toThrow(/^ISSUER must be/)
    expect(loadConfig({ ISSUER: 'https://id.example.com:8443/' }).issuer).toBe('https://id.example.com:8443')
  })

  it('reads NAME_FILE as NAME (Docker and Kubernetes secrets), without the trailing newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'authz-config-'))
    writeFileSync(join(dir, 'kes'), 'a-long-key-encryption-secret\n')
    writeFileSync(join(dir, 'db'), 'postgres://authz:pw@db:5432/authz')
    const c = loadConfig({ KEY_ENCRYPTION_SECRET_FILE: join(dir, 'kes'), DATABASE_URL_FILE: join(dir, 'db') })
    expect(c.keyEncryptionSecret).toBe('a-long-key-encryption-secret')
    expect(c.databaseUrl).toBe('postgres://authz:pw@db:5432/authz')
    expect(() => loadConfig({ KEY_ENCRYPTION_SECRET_FILE: join(dir, 'missing') })).toThrow(
      new ConfigError([`KEY_ENCRYPTION_SECRET_FILE must name a readable file, got ${JSON.stringify(join(dir, 'missing'))} (ENOENT)`]),
    )
    expect(() => loadConfig({ KEY_ENCRYPTION_SECRET: 'x'.repeat(20), KEY_ENCRYPTION_SECRET_FILE: join(dir, 'kes') })).toThrow(
      new ConfigError(['KEY_ENCRYPTION_SECRET and KEY_ENCRYPTION_SECRET_FILE must not both be set, got both']),
    )
    // A file's content is checked like the variable, and is a secret all the same.
    writeFileSync(join(dir, 'short'), 'short\n')
    expect(() => loadConfig({ KEY_ENCRYPTION_SECRET_FILE: join(dir, 'short') })).toThrow(
      new ConfigError(['KEY_ENCRYPTION_SECRET must be at least 16 characters long, got a value of 5 characters']),
    )
  })

  it("caps public clients' refresh tokens at a day unless PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME says otherwise", () => {
    expect(loadConfig({}).publicClientRefreshTokenLifetime).toBe(86400)
    expect(loadConfig({ PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME: '604800' }).publicClientRefreshTokenLifetime).toBe(604800)
    for (const bad of ['0', '-1', '1.5', 'a day', '31536001']) {
      expect(() => loadConfig({ PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME: bad })).toThrow(
        new ConfigError([`PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME must be a whole number of seconds from 1 to 31536000, got "${bad}"`]),
      )
    }
  })

  it("refuses REGISTRATION_ALLOWED_SCOPES listing the admin API's scopes, which a self-registered client could then ask for", () => {
    expect(() => loadConfig({ REGISTRATION_ALLOWED_SCOPES: 'openid authz:admin:read profile authz:admin' })).toThrow(
      new ConfigError([
        'REGISTRATION_ALLOWED_SCOPES must not list the admin API\'s scopes, got "authz:admin:read" and "authz:admin"; give them only to clients in the seed file',
      ]),
    )
    expect(loadConfig({ REGISTRATION_ALLOWED_SCOPES: 'openid authz:administrator' }).registrationAllowedScopes).toEqual([
      'openid',
      'authz:administrator',
    ])
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
    expect(lines).toEqual([
      'config error: PORT must be an integer from 0 to 65535, got "99999"',
      'config error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ])
  })
})
