// The browser and system the account page names a session by, from its sign-in's User-Agent:
// browsers that also name their ancestors (Edge says Chrome and Safari) are named as themselves.
import { describe, expect, it } from 'vitest'
import { describeDevice } from '../../../src/flows/account/device.js'

describe('describeDevice', () => {
  it.each([
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Edge',
      'Windows',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      'Chrome',
      'Android',
    ],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox', 'macOS'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      'Safari',
      'macOS',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Chrome', 'Linux'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1',
      'Chrome',
      'iOS',
    ],
    ['curl/8.11.0', 'curl', undefined],
    ['something else entirely', undefined, undefined],
  ])('%s', (userAgent, browser, system) => {
    expect(describeDevice(userAgent)).toEqual({ browser, system })
  })

  it('knows nothing without a User-Agent', () => {
    expect(describeDevice(undefined)).toEqual({ browser: undefined, system: undefined })
    expect(describeDevice('')).toEqual({ browser: undefined, system: undefined })
  })
})
