// The container files as shipped (no Docker engine here: they are read, as a reviewer would).
// Nothing in them may run with a known credential: compose requires every secret from the
// operator (${VAR:?message} fails `docker compose up` when it is unset), mounts no demo seed,
// and the image applies no seed unless told to.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { parseYaml } from './mini-yaml.js'

const compose = parseYaml(readFileSync('docker-compose.yml', 'utf8')) as {
  services: Record<string, { environment?: Record<string, string>; volumes?: string[]; ports?: string[]; build?: string; image?: string }>
}
const dockerfile = readFileSync('Dockerfile', 'utf8')

/** Variables whose value is a credential. */
const SECRET = /PASSWORD|SECRET|DATABASE_URL/

describe('docker-compose.yml', () => {
  it('has the two services', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['authz', 'postgres'])
  })

  it('takes every credential from the operator, required with ${VAR:?message}, never a default', () => {
    const secrets = Object.entries(compose.services).flatMap(([service, s]) =>
      Object.entries(s.environment ?? {})
        .filter(([name]) => SECRET.test(name))
        .map(([name, value]) => ({ service, name, value })),
    )
    expect(secrets.map((s) => `${s.service}.${s.name}`).sort()).toEqual([
      'authz.DATABASE_URL',
      'authz.KEY_ENCRYPTION_SECRET',
      'postgres.POSTGRES_PASSWORD',
    ])
    for (const { service, name, value } of secrets) {
      const refs = [...value.matchAll(/\$\{([A-Z_]+)(:?[-?+])?([^}]*)\}/g)]
      expect(refs.length, `${service}.${name} must reference a variable`).toBeGreaterThan(0)
      for (const [, , op, message] of refs) {
        expect(op, `${service}.${name}: ${value}`).toBe(':?')
        expect(message!.trim().length, `${service}.${name} needs a message`).toBeGreaterThan(0)
      }
      // What is left once the references are removed holds no password of its own.
      const literal = value.replace(/\$\{[^}]*\}/g, '')
      expect(literal).not.toMatch(/:[^/@:]+@/)
    }
    // Nowhere in the file does a credential fall back to a default (${VAR:-default}).
    for (const m of readFileSync('docker-compose.yml', 'utf8').matchAll(/\$\{([A-Z_]+):?-/g)) {
      expect(SECRET.test(m[1]!), m[0]).toBe(false)
    }
  })

  it('mounts no seed file and sets none: the demo seed is not deployed', () => {
    const authz = compose.services.authz!
    expect(authz.volumes ?? []).toEqual([])
    expect(authz.environment?.SEED_FILE).toBeUndefined()
    expect(authz.environment?.DEMO_SEED).toBeUndefined()
    expect(readFileSync('docker-compose.yml', 'utf8')).not.toMatch(/^[^#]*demo\.json/m)
  })

  it('publishes the server on the loopback interface only (a reverse proxy faces the network)', () => {
    expect(compose.services.authz!.ports).toEqual(['127.0.0.1:5000:5000'])
  })

  it('requires the public URL, and believes forwarded headers from the private addresses a proxy on the host reaches it from', () => {
    const env = compose.services.authz!.environment!
    expect(env.ISSUER).toBe('${ISSUER:?set ISSUER (the public URL, e.g. https://id.example.com) in .env}')
    // Docker forwards the published port from the network's gateway; uniquelocal is every private range.
    expect(loadConfig({ ISSUER: 'https://id.example.com', TRUST_PROXY: env.TRUST_PROXY }).trustProxy).toEqual(['uniquelocal'])
  })
})

describe('Dockerfile', () => {
  it('builds and runs on Node 24, the current LTS, in every stage', () => {
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1])
    expect(froms).toEqual(['node:24-bookworm-slim', 'node:24-bookworm-slim', 'node:24-bookworm-slim'])
  })

  it('applies no demo seed unless told to, and runs as the node user with a private /data', () => {
    expect(dockerfile).toMatch(/^ENV .*\bDEMO_SEED=false\b/m)
    expect(dockerfile).not.toMatch(/^ENV .*\bSEED_FILE=/m)
    expect(dockerfile).not.toMatch(/KEY_ENCRYPTION_SECRET|PASSWORD/)
    expect(dockerfile).toMatch(/chmod 700 \/data/)
    expect(dockerfile).toMatch(/^USER node$/m)
  })

  it('listens on every interface of the container and writes JSON logs, even with a terminal', () => {
    // The server's own default is 127.0.0.1 (nobody else reaches a development machine's demo).
    expect(dockerfile).toMatch(/^ENV .*\bHOST=0\.0\.0\.0\b/m)
    expect(dockerfile).toMatch(/^ENV .*\bLOG_FORMAT=json\b/m)
  })

  it('starts the server as npm start does: WebAssembly on the baseline compiler, a small young generation', () => {
    // Node 24 takes --liftoff-only only on its command line; without it the embedded server's peak doubles.
    // --max-semi-space-size=4 bounds the young generation and --heap-growing-percent=30 the old
    // one's growth between full collections: the peak under load stays below 300 MiB.
    expect(dockerfile).toMatch(
      /^CMD \["node", "--liftoff-only", "--max-semi-space-size=4", "--heap-growing-percent=30", "dist\/main\.js"\]$/m,
    )
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
    expect(pkg.scripts.start).toBe('node --liftoff-only --max-semi-space-size=4 --heap-growing-percent=30 dist/main.js')
  })
})

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string }; license: string }

  // Node 20 is past its end of life but still runs authz (CI tests it): engines admits it, so npm
  // does not warn on every install, and the server says so once at start (src/domain/node-support.ts).
  it('declares the Node versions authz runs on: 20.19 and later', () => {
    expect(pkg.engines.node).toBe('>=20.19.0')
  })

  it('ships the license it names', () => {
    expect(pkg.license).toBe('Apache-2.0')
    const license = readFileSync('LICENSE', 'utf8')
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/)
    expect(license).toContain('END OF TERMS AND CONDITIONS')
  })
})
