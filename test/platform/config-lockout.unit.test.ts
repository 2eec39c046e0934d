// The lockout, throttling and rate-limit settings: documented defaults and their checks.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('lockout and throttling configuration', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      lockoutThreshold: 10,
      lockoutDuration: 300,
      lockoutMaxDuration: 86_400,
      clientAuthFailureLimit: 10,
      clientAuthBlockDuration: 60,
      clientAuthBlockMaxDuration: 3600,
      userCodeFailureLimit: 5,
      userCodeBlockDuration: 300,
      rateLimitSignIn: 60,
      rateLimitApi: 60_000,
    })
  })

  it('takes 0 to turn a rate limit off, but never a threshold of 0', () => {
    expect(loadConfig({ RATE_LIMIT_API: '0', RATE_LIMIT_SIGN_IN: '0' })).toMatchObject({ rateLimitApi: 0, rateLimitSignIn: 0 })
    expect(() => loadConfig({ LOCKOUT_THRESHOLD: '0' })).toThrow(
      new ConfigError(['LOCKOUT_THRESHOLD must be an integer from 1 to 1000, got "0"']),
    )
    expect(() => loadConfig({ CLIENT_AUTH_FAILURE_LIMIT: 'ten' })).toThrow(
      new ConfigError(['CLIENT_AUTH_FAILURE_LIMIT must be an integer from 1 to 1000, got "ten"']),
    )
  })

  it('refuses a longest block shorter than the first', () => {
    expect(() => loadConfig({ LOCKOUT_DURATION: '600', LOCKOUT_MAX_DURATION: '300' })).toThrow(
      new ConfigError(['LOCKOUT_MAX_DURATION must not be less than LOCKOUT_DURATION (600), got "300"']),
    )
    expect(() => loadConfig({ CLIENT_AUTH_BLOCK_DURATION: '7200' })).toThrow(
      /^CLIENT_AUTH_BLOCK_MAX_DURATION must not be less than CLIENT_AUTH_BLOCK_DURATION \(7200\), got "3600"$/,
    )
    expect(() => loadConfig({ USER_CODE_BLOCK_DURATION: '90000' })).toThrow(
      /^LOCKOUT_MAX_DURATION must not be less than USER_CODE_BLOCK_DURATION \(90000\), got "86400"$/,
    )
  })
})
