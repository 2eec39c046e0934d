// One clear warning at start on a Node.js past its end of life (src/main.ts), with the date; none
// on a supported one, nor on one newer than the table knows.
import { describe, expect, it } from 'vitest'
import { nodeEndOfLifeWarning } from '../../src/domain/node-support.js'

const TODAY = new Date('2026-11-27T10:00:00Z')

describe('nodeEndOfLifeWarning', () => {
  it('warns on Node 20 after 2026-04-30, with the date and what to run instead', () => {
    expect(nodeEndOfLifeWarning('v20.20.2', TODAY)).toBe(
      'Node.js v20.20.2 reached its end of life on 2026-04-30 and gets no security fixes: run authz on Node.js 24 (LTS)',
    )
  })

  it('does not warn on Node 20 up to its last day', () => {
    expect(nodeEndOfLifeWarning('v20.20.2', new Date('2026-04-30T23:00:00Z'))).toBeUndefined()
    expect(nodeEndOfLifeWarning('v20.20.2', new Date('2026-05-01T00:00:00Z'))).toMatch(/end of life on 2026-04-30/)
  })

  it('warns on Node 18 and older, and on odd-numbered lines past their end', () => {
    expect(nodeEndOfLifeWarning('v18.20.4', TODAY)).toMatch(/^Node\.js v18\.20\.4 reached its end of life on 2025-04-30 /)
    expect(nodeEndOfLifeWarning('v25.2.0', TODAY)).toMatch(/^Node\.js v25\.2\.0 reached its end of life on 2026-06-01 /)
    expect(nodeEndOfLifeWarning('v12.22.12', TODAY)).toBe(
      'Node.js v12.22.12 is long past its end of life and gets no security fixes: run authz on Node.js 24 (LTS)',
    )
  })

  it('says nothing on a supported line, nor on one newer than it knows', () => {
    expect(nodeEndOfLifeWarning('v22.12.0', TODAY)).toBeUndefined()
    expect(nodeEndOfLifeWarning('v24.11.1', TODAY)).toBeUndefined()
    expect(nodeEndOfLifeWarning('v26.1.0', TODAY)).toBeUndefined()
    expect(nodeEndOfLifeWarning('v27.0.0', TODAY)).toBeUndefined()
    expect(nodeEndOfLifeWarning('not a version', TODAY)).toBeUndefined()
  })
})
