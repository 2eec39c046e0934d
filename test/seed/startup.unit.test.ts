// What a start says about seeds: which it applied and why, or why it applied none, and how to
// apply the demo seed again after a restart skipped it; and the demo banner's credentials, taken
// from the seed itself.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { prettyMessage, type Colors } from '../../src/http/pretty-log.js'
import { DEMO_SEED_FILE } from '../../src/seed/paths.js'
import { SeedFile } from '../../src/seed/schema.js'
import { demoBanner, seedPlan } from '../../src/seed/startup.js'

const DEMO = 'seed/demo.json'

describe('seedPlan', () => {
  it('applies SEED_FILE at every start, whatever the database', () => {
    for (const created of [true, false]) {
      expect(seedPlan(loadConfig({ SEED_FILE: 'my-seed.json' }), created, DEMO)).toEqual({
        apply: true,
        file: 'my-seed.json',
        reason: 'SEED_FILE is applied at every start',
      })
    }
  })

  it('applies the demo seed to the database this start created', () => {
    expect(seedPlan(loadConfig({}), true, DEMO)).toEqual({
      apply: true,
      file: DEMO,
      reason: 'the demo seed is applied once, to the database this start created',
    })
  })

  it('says that a restart skipped the demo seed, why, and how to apply it again', () => {
    expect(seedPlan(loadConfig({}), false, DEMO)).toEqual({
      apply: false,
      file: DEMO,
      message:
        'demo seed skipped: it was applied when this database was created, and is not applied again so that changes made since are kept. ' +
        'To apply seed/demo.json again, start with SEED_FILE=seed/demo.json (applied at every start), or run `npx authz seed seed/demo.json` while the server is stopped',
    })
  })

  it('says why no seed was applied on PostgreSQL without SEED_FILE, or with DEMO_SEED=false', () => {
    const none = {
      apply: false,
      file: undefined,
      message:
        'no seed applied: SEED_FILE is not set and the demo seed is off (it is on by default only without DATABASE_URL; DEMO_SEED=true turns it on)',
    }
    expect(seedPlan(loadConfig({ DATABASE_URL: 'postgres://db/authz' }), true, DEMO)).toEqual(none)
    expect(seedPlan(loadConfig({ DEMO_SEED: 'false' }), true, DEMO)).toEqual(none)
  })
})

describe('demoBanner', () => {
  it("gives the landing page, the demo user and the first request, from the demo seed's own credentials", () => {
    const demo = SeedFile.parse(JSON.parse(readFileSync(DEMO_SEED_FILE, 'utf8')))
    expect(demoBanner('http://localhost:5000', demo)).toEqual([
      'Open         http://localhost:5000/',
      'Sign in as   alice / alice-password',
      'First token  curl -s -u demo-backend:demo-backend-secret -d grant_type=client_credentials http://localhost:5000/connect/token',
      'Every flow   docs/flows.md; these credentials are public: keep this server on your machine',
    ])
  })

  it('names no credential the seed lacks', () => {
    const seed = SeedFile.parse({ clients: [{ clientId: 'spa', allowedGrantTypes: ['client_credentials'] }] })
    expect(demoBanner('http://localhost:5000', seed)).toEqual([
      'Open         http://localhost:5000/',
      'Every flow   docs/flows.md; these credentials are public: keep this server on your machine',
    ])
  })

  it('is printed below its line at a terminal', () => {
    const plain = (s: string) => s
    const colors: Colors = { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain, magenta: plain }
    const banner = ['Open         http://localhost:5000/', 'Sign in as   alice / alice-password']
    expect(prettyMessage({ msg: 'authz is ready, with the demo seed', banner }, colors)).toBe(
      'authz is ready, with the demo seed\n    Open         http://localhost:5000/\n    Sign in as   alice / alice-password',
    )
  })
})
