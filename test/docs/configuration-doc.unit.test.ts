// docs/configuration.md is generated from src/config.ts (scripts/config-doc.ts, `npm run docs`).
// A variable added, a default or a bound changed, a description edited in src/config.ts without
// regenerating the page would leave operators reading a reference that the server contradicts.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/config-doc.js'
import { CONFIG_GROUPS, configReference, loadConfig } from '../../src/config.js'

describe('docs/configuration.md', () => {
  it('is exactly what `npm run docs` writes from src/config.ts (a stale page fails here)', async () => {
    const onDisk = await readFile(CONFIGURATION_DOC, 'utf8')
    expect(onDisk, 'docs/configuration.md is out of date with src/config.ts: run `npm run docs` and commit the result').toBe(
      renderConfigurationDoc(),
    )
  })

  it('has one row per variable, under its group, with the default loadConfig applies', async () => {
    const page = await readFile(CONFIGURATION_DOC, 'utf8')
    const rows = [...page.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2]])
    const variables = configReference()
    expect(rows.map(([name]) => name)).toEqual(variables.map((v) => v.name))
    expect(new Set(variables.map((v) => v.group))).toEqual(new Set(CONFIG_GROUPS))
    for (const v of variables) expect(v.doc, `${v.name} needs a description of one sentence or more`).toMatch(/^[A-Z`].{20,}\.\)?$/s)

    // Spot checks against the parser itself, so a wrong default in the page cannot pass.
    const defaults = loadConfig({})
    const shown = Object.fromEntries(rows)
    expect(shown.PORT).toBe(`\`${defaults.port}\``)
    expect(shown.ACCESS_TOKEN_LIFETIME).toBe(`\`${defaults.accessTokenLifetime}\``)
    expect(shown.SESSION_LIFETIME).toBe(`\`${defaults.sessionLifetime}\``)
    expect(shown.TRUST_PROXY).toBe(`\`${String(defaults.trustProxy)}\``)
    expect(shown.DATABASE_URL).toBe('unset')
  })

  it('says what each value must be in the words the error message uses', () => {
    const port = configReference().find((v) => v.name === 'PORT')!
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(`PORT must be ${port.accepts}, got "abc"`)
  })
})
