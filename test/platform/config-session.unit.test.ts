// The sign-in session's lifetimes: documented defaults and their checks.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('session configuration', () => {
  it('applies the documented defaults: 30 minutes idle, 10 hours at most', () => {
    expect(loadConfig({})).toMatchObject({ sessionIdleTimeout: 1800, sessionLifetime: 36_000 })
    expect(loadConfig({ SESSION_IDLE_TIMEOUT: '60', SESSION_LIFETIME: '60' })).toMatchObject({
      sessionIdleTimeout: 60,
      sessionLifetime: 60,
    })
  })

  it('refuses zero, non-numbers and an idle timeout longer than the lifetime', () => {
    expect(() => loadConfig({ SESSION_IDLE_TIMEOUT: '0' })).toThrow(
      /^SESSION_IDLE_TIMEOUT must be a whole number of seconds from 1 to 31536000, got "0"$/,
    )
    expect(() => loadConfig({ SESSION_LIFETIME: 'a day' })).toThrow(
      /^SESSION_LIFETIME must be a whole number of seconds from 1 to 31536000, got "a day"$/,
    )
    expect(() => loadConfig({ SESSION_IDLE_TIMEOUT: '7200', SESSION_LIFETIME: '3600' })).toThrow(
      new ConfigError(['SESSION_LIFETIME must not be less than SESSION_IDLE_TIMEOUT (7200), got "3600"']),
    )
  })
})
