// docs/connect-an-app.md shows the example apps as they are in examples/<library>/, which CI runs
// (test/e2e/examples.test.ts): a file shown on the page is the file, byte for byte, so what a
// reader copies is what was tested. Every example is on the page with its client and the file its
// start script runs.
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const PAGE = 'docs/connect-an-app.md'
const page = readFileSync(PAGE, 'utf8')

/** Each block introduced as [`examples/…`](../examples/…): on the line before it. */
const shown = new Map([...page.matchAll(/^\[`(examples\/[^`]+)`\]\(\.\.\/\1\):\n\n```\w+\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]))

const examples = readdirSync('examples', { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)

describe(PAGE, () => {
  it('shows examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5)
    expect(shown.size).toBeGreaterThanOrEqual(examples.length * 2)
  })

  it.each([...shown.keys()])('shows %s as it is', (path) => {
    expect(shown.get(path)).toBe(readFileSync(path, 'utf8'))
  })

  it.each(examples)('shows examples/%s: its client and the file its start script runs', (name) => {
    const start: string = JSON.parse(readFileSync(`examples/${name}/package.json`, 'utf8')).scripts.start
    expect(start).toMatch(/^node [\w.-]+\.js$/)
    expect([...shown.keys()]).toEqual(
      expect.arrayContaining([`examples/${name}/client.json`, `examples/${name}/${start.slice('node '.length)}`]),
    )
  })
})
